// Package offline is a model for the agent that needs no network and no
// key: a small rule-based reader of the task commands taskchat documents,
// so the whole service can be developed, demonstrated and tested end to end
// without a model service. It makes real tool calls through the same loop
// and tools as a language model would, and writes its confirmations from
// the tool results.
package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/taskchat/taskchat/internal/agent"
)

// The task tools the offline model calls, as the MCP server names them.
const (
	toolAddTask      = "add_task"
	toolListTasks    = "list_tasks"
	toolCompleteTask = "complete_task"
	toolDeleteTask   = "delete_task"
	toolUpdateTask   = "update_task"
)

// offlineWordsPerChunk is how many words each streamed piece of text holds.
const offlineWordsPerChunk = 3

// Model is the offline agent.Model.
//
// Like a real model it keeps no state between calls: each answer is derived
// from the request's messages alone. With no tool results after the last
// user message it parses that message into tool calls (or a reply); with
// results it confirms them, except after the listing that finds a task named
// by its title, where it calls the tool on the one task that matches or asks
// which one was meant.
type Model struct{}

// New returns the offline model.
func New() *Model { return &Model{} }

// Name identifies the offline model in logs and stored replies.
func (*Model) Name() string { return "offline" }

// Stream answers req deterministically. Its text goes to onText a few words
// at a time, as a real model's would, and its usage is an estimate of about
// four characters a token, so token limits can be exercised offline.
func (*Model) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	if err := ctx.Err(); err != nil {
		return agent.Response{}, err
	}
	resp := offlineRespond(req.Messages)
	if err := streamOfflineText(ctx, resp.Text, onText); err != nil {
		return agent.Response{}, err
	}
	resp.Usage = estimateOfflineUsage(req, resp)
	return resp, nil
}

// offlineRespond is the offline model's state machine. The state is read
// from the messages after the last user message: no tool round yet means
// parse the request; a round that is the listing a nameLookup asked for
// means resolve the name; any other round means confirm its results.
func offlineRespond(msgs []agent.Message) agent.Response {
	userText, turn := currentTurn(msgs)
	plan := parseUtterance(userText)
	ids := &callIDs{next: countToolCalls(msgs) + 1}
	round, ok := lastToolRound(turn)
	switch {
	case !ok:
		return plan.response(ids)
	case plan.lookup != nil && round.isListing():
		return resolveLookup(*plan.lookup, round, ids)
	}
	return agent.Response{Text: confirmRound(round)}
}

// currentTurn returns the last user message's text and what followed it.
func currentTurn(msgs []agent.Message) (string, []agent.Message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleUser {
			return msgs[i].Content, msgs[i+1:]
		}
	}
	return "", msgs
}

// callIDs numbers tool calls after those already in the conversation, so
// ids stay unique across the rounds of a turn without any stored state.
type callIDs struct{ next int }

func (c *callIDs) call(p plannedCall) agent.ToolCall {
	args, _ := json.Marshal(p.args) // a map of strings and numbers always marshals
	id := fmt.Sprintf("call_%d", c.next)
	c.next++
	return agent.ToolCall{ID: id, Name: p.tool, Arguments: string(args)}
}

func countToolCalls(msgs []agent.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.ToolCalls)
	}
	return n
}

func (p offlinePlan) response(ids *callIDs) agent.Response {
	if len(p.calls) == 0 {
		return agent.Response{Text: p.reply}
	}
	var resp agent.Response
	for _, c := range p.calls {
		resp.ToolCalls = append(resp.ToolCalls, ids.call(c))
	}
	return resp
}

// toolRound is the last assistant message's calls and the tool messages
// that answered them, by call id.
type toolRound struct {
	calls   []agent.ToolCall
	results map[string]string
}

func lastToolRound(turn []agent.Message) (toolRound, bool) {
	for i := len(turn) - 1; i >= 0; i-- {
		if turn[i].Role != agent.RoleAssistant || len(turn[i].ToolCalls) == 0 {
			continue
		}
		r := toolRound{calls: turn[i].ToolCalls, results: map[string]string{}}
		for _, m := range turn[i+1:] {
			if m.Role == agent.RoleTool {
				r.results[m.ToolCallID] = m.Content
			}
		}
		return r, true
	}
	return toolRound{}, false
}

func (r toolRound) isListing() bool {
	return len(r.calls) == 1 && r.calls[0].Name == toolListTasks
}

// toolOutcome is any task tool's result, or its error. Text is what the
// loop passes on from a tool that returned no structured result.
type toolOutcome struct {
	Error  string       `json:"error"`
	Text   string       `json:"text"`
	TaskID int64        `json:"task_id"`
	Title  string       `json:"title"`
	Tasks  []listedTask `json:"tasks"`
}

// listedTask is one task of a list_tasks result.
type listedTask struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Completed   bool   `json:"completed"`
}

// outcome decodes the result of call; a result that is not JSON is taken
// as an error sentence, and a missing one as a failure to report.
func (r toolRound) outcome(call agent.ToolCall) toolOutcome {
	content, ok := r.results[call.ID]
	if !ok {
		return toolOutcome{Error: fmt.Sprintf("I got no answer from %s; please try again.", call.Name)}
	}
	var out toolOutcome
	if err := json.Unmarshal([]byte(content), &out); err != nil {
		return toolOutcome{Error: content}
	}
	return out
}

// resolveLookup acts on the one listed task whose title holds every word
// the person used, or asks when several do, or says that none does.
func resolveLookup(l nameLookup, round toolRound, ids *callIDs) agent.Response {
	out := round.outcome(round.calls[0])
	if out.Error != "" {
		return agent.Response{Text: confirmRound(round)}
	}
	phrase := strings.Join(l.words, " ")
	matches := matchTasks(out.Tasks, l.words)
	switch len(matches) {
	case 0:
		return agent.Response{Text: fmt.Sprintf("I couldn't find a task matching %q — want to see your list?", phrase)}
	case 1:
		args := maps.Clone(l.args)
		args["task_id"] = matches[0].ID
		return agent.Response{ToolCalls: []agent.ToolCall{ids.call(plannedCall{tool: l.tool, args: args})}}
	}
	a := offlineActions[l.tool]
	lines := []string{fmt.Sprintf("%d tasks match %q:", len(matches), phrase)}
	for _, t := range matches {
		lines = append(lines, taskLine(t))
	}
	lines = append(lines, fmt.Sprintf("Which one should I %s? Tell me its number, like \"%s\".",
		a.verb, fmt.Sprintf(a.example, matches[0].ID)))
	return agent.Response{Text: strings.Join(lines, "\n")}
}

// matchTasks returns the tasks whose title contains every word, in any
// case; a plural word also matches its singular ("meetings", "meeting").
func matchTasks(tasks []listedTask, words []string) []listedTask {
	var out []listedTask
	for _, t := range tasks {
		if titleHasWords(strings.ToLower(t.Title), words) {
			out = append(out, t)
		}
	}
	return out
}

func titleHasWords(title string, words []string) bool {
	for _, w := range words {
		singular := w
		if len(w) > 3 {
			singular = strings.TrimSuffix(w, "s")
		}
		if !strings.Contains(title, w) && !strings.Contains(title, singular) {
			return false
		}
	}
	return true
}

// offlineActions are the wordings of the tools that act on one task.
var offlineActions = map[string]struct{ verb, example string }{
	toolCompleteTask: {verb: "mark as complete", example: "Complete task %d"},
	toolDeleteTask:   {verb: "delete", example: "Delete task %d"},
	toolUpdateTask:   {verb: "change", example: "Change task %d to 'Call mom tonight'"},
}

// offlineHelp is the reply to anything the parser does not understand.
const offlineHelp = "I can keep your to-do list. Try saying:\n" +
	"- \"Add a task to buy groceries\"\n" +
	"- \"Show me all my tasks\" or \"What's pending?\"\n" +
	"- \"Mark task 3 as complete\"\n" +
	"- \"Delete task 2\" or \"Delete the meeting task\"\n" +
	"- \"Change task 1 to 'Call mom tonight'\""

// smallTalk answers a message with no intent: a greeting, thanks, or
// something the parser did not understand.
func smallTalk(ws []utteranceWord) string {
	for _, w := range ws {
		switch w.low {
		case "hi", "hello", "hey", "hiya", "howdy", "morning", "evening":
			return "Hi! " + offlineHelp
		case "thanks", "thank", "thx", "cheers":
			return "You're welcome! Anything else for your list?"
		case "help":
			return offlineHelp
		}
	}
	if len(ws) == 0 {
		return offlineHelp
	}
	return "Sorry, I didn't understand that. " + offlineHelp
}

// whichTaskQuestion asks for the task an action is about.
func whichTaskQuestion(tool string) string {
	a := offlineActions[tool]
	return "Which task should I " + a.verb + "? Tell me its number, like \"" +
		strings.ReplaceAll(a.example, "%d", "2") + "\", or a word from its title."
}

// confirmRound says what each call of the round did, one line per call.
func confirmRound(r toolRound) string {
	lines := make([]string, 0, len(r.calls))
	for _, call := range r.calls {
		lines = append(lines, confirmCall(call, r.outcome(call)))
	}
	return strings.Join(lines, "\n")
}

func confirmCall(call agent.ToolCall, out toolOutcome) string {
	switch {
	case out.Error != "":
		return describeToolError(call, out.Error)
	case out.Text != "" && out.TaskID == 0 && out.Tasks == nil:
		return sentence(out.Text)
	}
	switch call.Name {
	case toolAddTask:
		return sentence(fmt.Sprintf("Added task %d: %s", out.TaskID, out.Title))
	case toolListTasks:
		return describeList(callArgs(call).Status, out.Tasks)
	case toolCompleteTask:
		return sentence(fmt.Sprintf("Marked task %d as complete: %s", out.TaskID, out.Title))
	case toolDeleteTask:
		return sentence(fmt.Sprintf("Deleted task %d: %s", out.TaskID, out.Title))
	case toolUpdateTask:
		return sentence(fmt.Sprintf("Updated task %d: %s", out.TaskID, out.Title))
	}
	return fmt.Sprintf("Done (%s).", call.Name)
}

// describeToolError says a missing task plainly and passes any other error
// sentence on as the tool wrote it.
func describeToolError(call agent.ToolCall, msg string) string {
	id := callArgs(call).TaskID
	if id > 0 && strings.Contains(strings.ToLower(msg), "not found") {
		return fmt.Sprintf("I couldn't find task %d — want to see your list?", id)
	}
	return sentence(msg)
}

// offlineCallArgs are the arguments of any task tool the replies need.
type offlineCallArgs struct {
	TaskID int64  `json:"task_id"`
	Status string `json:"status"`
}

// callArgs decodes what it can; arguments that do not decode read as zero.
func callArgs(call agent.ToolCall) offlineCallArgs {
	var a offlineCallArgs
	_ = json.Unmarshal([]byte(call.Arguments), &a)
	return a
}

// describeList writes one task per line with its id and state.
func describeList(status string, tasks []listedTask) string {
	n := len(tasks)
	var head string
	switch {
	case status == "pending" && n == 0:
		return "You have no pending tasks — all caught up!"
	case status == "completed" && n == 0:
		return "You haven't completed any tasks yet."
	case n == 0:
		return `You have no tasks yet. Try "Add a task to buy groceries".`
	case status == "pending":
		head = fmt.Sprintf("You have %s:", plural(n, "pending task"))
	case status == "completed":
		head = fmt.Sprintf("You have completed %s:", plural(n, "task"))
	default:
		head = fmt.Sprintf("You have %s:", plural(n, "task"))
	}
	lines := []string{head}
	for _, t := range tasks {
		lines = append(lines, taskLine(t))
	}
	return strings.Join(lines, "\n")
}

// taskLine is a task as a Markdown checklist item: "- [x] #3 Call mom".
func taskLine(t listedTask) string {
	box := "[ ]"
	if t.Completed {
		box = "[x]"
	}
	line := fmt.Sprintf("- %s #%d %s", box, t.ID, t.Title)
	if t.Description != "" {
		line += " — " + t.Description
	}
	return line
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// sentence ends s with a full stop unless it already ends a sentence.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// streamOfflineText hands text to onText a few words at a time; the pieces
// join back into text exactly. It stops when ctx is done.
func streamOfflineText(ctx context.Context, text string, onText func(string)) error {
	if text == "" || onText == nil {
		return ctx.Err()
	}
	pieces := strings.SplitAfter(text, " ")
	for i := 0; i < len(pieces); i += offlineWordsPerChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		onText(strings.Join(pieces[i:min(i+offlineWordsPerChunk, len(pieces))], ""))
	}
	return nil
}

// estimateOfflineUsage counts about one token per four characters of
// everything sent (system prompt, tools, messages) and everything produced.
func estimateOfflineUsage(req agent.Request, resp agent.Response) agent.Usage {
	prompt := agent.EstimateTokens(req.System)
	for _, t := range req.Tools {
		prompt += agent.EstimateTokens(t.Name + t.Description + string(t.Parameters))
	}
	for _, m := range req.Messages {
		prompt += agent.EstimateTokens(m.Content) + estimateCallTokens(m.ToolCalls)
	}
	completion := agent.EstimateTokens(resp.Text) + estimateCallTokens(resp.ToolCalls)
	return agent.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

func estimateCallTokens(calls []agent.ToolCall) int {
	n := 0
	for _, c := range calls {
		n += agent.EstimateTokens(c.Name + c.Arguments)
	}
	return n
}
