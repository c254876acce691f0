package agent

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/tasks"
)

// missingResult stands in for a tool call whose result was never stored,
// so that a history is always one a model accepts.
var missingResult = tasks.ErrorJSON("This tool call has no recorded result.")

// History turns stored messages, oldest first, into the model's message
// list: user text; for an assistant message, each round of its tool calls
// followed by their results, then its text. It keeps the newest messages
// whose estimated size fits maxTokens, dropping whole stored messages so a
// tool call is never separated from its result, and starts at a user
// message.
func History(stored []tasks.Message, maxTokens int) []Message {
	first, budget := len(stored), maxTokens
	for first > 0 {
		cost := storedTokens(stored[first-1])
		if cost > budget {
			break
		}
		budget -= cost
		first--
	}
	for first < len(stored) && stored[first].Role != tasks.RoleUser {
		first++
	}
	n := 0
	for _, m := range stored[first:] {
		n += modelMessages(m)
	}
	out := make([]Message, 0, n)
	for _, m := range stored[first:] {
		out = appendStored(out, m)
	}
	return out
}

// modelMessages is how many model messages appendStored makes of m.
func modelMessages(m tasks.Message) int {
	if m.Role == tasks.RoleUser {
		return 1
	}
	calls := tasks.Resolved(m.ToolCalls)
	n := len(calls)
	for i, c := range calls {
		if i == 0 || c.Round != calls[i-1].Round {
			n++ // the assistant message of the round's calls
		}
	}
	if m.Content != "" {
		n++
	}
	return n
}

// appendStored appends the model messages of one stored message.
func appendStored(out []Message, m tasks.Message) []Message {
	if m.Role == tasks.RoleUser {
		return append(out, Message{Role: RoleUser, Content: m.Content})
	}
	// A placeholder's resolution stands in for it (tasks.Resolved).
	all := tasks.Resolved(m.ToolCalls)
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].Round == all[i].Round {
			j++
		}
		round := all[i:j]
		calls := make([]ToolCall, len(round))
		for k, c := range round {
			calls[k] = ToolCall{ID: c.CallID, Name: c.Tool, Arguments: argumentsText(c.Arguments)}
		}
		out = append(out, Message{Role: RoleAssistant, ToolCalls: calls})
		for _, c := range round {
			result := c.Result
			if len(result) == 0 || string(result) == "null" {
				result = missingResult
			}
			out = append(out, Message{Role: RoleTool, ToolCallID: c.CallID, Content: string(result)})
		}
		i = j
	}
	if m.Content != "" {
		out = append(out, Message{Role: RoleAssistant, Content: m.Content})
	}
	return out
}

// argumentsText gives back the arguments as the model wrote them: the audit
// stores arguments that were not JSON as a JSON string.
func argumentsText(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// HistoryChars is the most characters, counting the text of stored
// messages and their tool calls' arguments and results, that History can
// keep within maxTokens: EstimateTokens counts a token for every four
// characters at least, and History more for each message and call. A store
// that reads the newest messages only while they add up to at most this
// never leaves out one that History would keep.
func HistoryChars(maxTokens int) int {
	return 4 * maxTokens
}

func storedTokens(m tasks.Message) int {
	n := EstimateTokens(m.Content) + 4
	for _, c := range m.ToolCalls {
		n += EstimateTokens(string(c.Arguments)) + EstimateTokens(string(c.Result)) + 8
	}
	return n
}

// EstimateTokens guesses how many tokens s costs a model, at about four
// characters a token. It is the one estimate wherever no model has counted:
// the history window here, the usage the offline model reports, and that
// of a model call cut short before its model reported any.
func EstimateTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// EstimateUsage is the usage of a call that sent req and produced resp, by
// EstimateTokens: everything sent (system prompt, tools, messages) and
// everything produced.
func EstimateUsage(req Request, resp Response) Usage {
	prompt := EstimateTokens(req.System)
	for _, t := range req.Tools {
		prompt += EstimateTokens(t.Name + t.Description + string(t.Parameters))
	}
	for _, m := range req.Messages {
		prompt += EstimateTokens(m.Content) + estimateCallTokens(m.ToolCalls)
	}
	completion := EstimateTokens(resp.Text) + estimateCallTokens(resp.ToolCalls)
	return Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

func estimateCallTokens(calls []ToolCall) int {
	n := 0
	for _, c := range calls {
		n += EstimateTokens(c.Name + c.Arguments)
	}
	return n
}
