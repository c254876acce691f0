package evaltest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Chat runs turns for the evaluation: Memory, or the chat engine on
// PostgreSQL.
type Chat interface {
	// Tasks is the task service the chat's tools act through: a case's
	// list is seeded, and read back, through it.
	Tasks() *tasks.Service
	// NewUser returns a user no other case uses.
	NewUser(tb testing.TB) string
	// Say runs one turn of userID's: message, said in conversation (0
	// starts a new one).
	Say(ctx context.Context, userID string, conversationID int64, message string) (Turn, error)
}

// Turn is what one message did.
type Turn struct {
	ConversationID int64
	Reply          string
	Calls          []Call
}

// Call is one tool call of a turn.
type Call struct {
	Tool      string
	Arguments json.RawMessage
}

// Result is how a case went.
type Result struct {
	Case Case
	// Problem says what went otherwise than the case wants: "" when it
	// did what the case wants.
	Problem string
	// Transcript is the conversation: each message, its reply and its
	// tool calls with their arguments.
	Transcript string
}

// Name names c in a test's output: where it is written, and what it says.
func (c Case) Name() string {
	return fmt.Sprintf("%s %s", c.Pos, strings.Join(c.Say, " → "))
}

// Run plays cases on chat, one after another, and fails tb for each that
// does not do what it wants, and for each known limit that does. It logs
// the pass rate by kind (see Table) and returns every case's result.
func Run(tb testing.TB, chat Chat, cases []Case) []Result {
	tb.Helper()
	results := make([]Result, len(cases))
	for i, c := range cases {
		r := Play(tb, chat, c)
		results[i] = r
		switch {
		case c.Limit != "" && r.Problem == "":
			tb.Errorf("%s: passes, but is marked as a known limit (%s); remove the mark", c.Name(), c.Limit)
		case c.Limit == "" && r.Problem != "":
			tb.Errorf("%s:\n%s", c.Name(), r.Problem)
		}
	}
	tb.Log("\n" + Table(results))
	return results
}

// Play plays one case for a new user: seeds the list it is given, says
// its messages, and judges what the conversation did.
func Play(tb testing.TB, chat Chat, c Case) Result {
	tb.Helper()
	ctx := context.Background()
	user := chat.NewUser(tb)
	svc := chat.Tasks()
	for _, line := range c.Given {
		want := parseTask(line)
		task, err := svc.Add(ctx, user, tasks.NewTask{Title: want.title, Description: want.description}, nil)
		if err == nil && want.done {
			_, err = svc.Complete(ctx, user, task.ID, nil)
		}
		if err != nil {
			tb.Fatalf("%s: seeding %q: %v", c.Pos, line, err)
		}
	}
	var conversation int64
	var last Turn
	var transcript strings.Builder
	for _, msg := range c.Say {
		if msg == NewConversation {
			conversation = 0
			transcript.WriteString("  ---\n")
			continue
		}
		turn, err := chat.Say(ctx, user, conversation, msg)
		if err != nil {
			return Result{Case: c, Problem: fmt.Sprintf("%q failed: %v\n%s", msg, err, transcript.String()), Transcript: transcript.String()}
		}
		conversation, last = turn.ConversationID, turn
		writeExchange(&transcript, msg, turn)
	}
	list, err := allTasks(ctx, svc, user)
	if err != nil {
		tb.Fatalf("%s: reading the list: %v", c.Pos, err)
	}
	r := Result{Case: c, Transcript: transcript.String()}
	if problem := Judge(c, last.Calls, list); problem != "" {
		r.Problem = problem + "\n" + r.Transcript
	}
	return r
}

// writeExchange writes one message, its tool calls and its reply.
func writeExchange(b *strings.Builder, msg string, turn Turn) {
	fmt.Fprintf(b, "  > %s\n", msg)
	for _, c := range turn.Calls {
		fmt.Fprintf(b, "    %s %s\n", c.Tool, c.Arguments)
	}
	fmt.Fprintf(b, "  %s\n", strings.ReplaceAll(turn.Reply, "\n", "\n  "))
}

// allTasks reads every task of userID, a page at a time as clients do.
func allTasks(ctx context.Context, svc *tasks.Service, userID string) ([]tasks.Task, error) {
	var all []tasks.Task
	for cursor := ""; ; {
		page, err := svc.ListPage(ctx, userID, tasks.Filter{Status: tasks.StatusAll}, tasks.MaxTaskPage, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if cursor = page.Next; cursor == "" {
			return all, nil
		}
	}
}

// Table is the pass rate by kind, as a Markdown table, kinds in
// alphabetical order, then all of them.
func Table(results []Result) string {
	type tally struct{ pass, total int }
	byKind := map[string]*tally{}
	for _, r := range results {
		k := byKind[r.Case.Kind]
		if k == nil {
			k = &tally{}
			byKind[r.Case.Kind] = k
		}
		k.total++
		if r.Problem == "" {
			k.pass++
		}
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	pass, total := 0, 0
	b.WriteString("| kind | cases | passed | rate |\n|---|---|---|---|\n")
	for _, k := range kinds {
		c := byKind[k]
		pass, total = pass+c.pass, total+c.total
		fmt.Fprintf(&b, "| %s | %d | %d | %.0f%% |\n", k, c.total, c.pass, 100*float64(c.pass)/float64(c.total))
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %.1f%% |\n", total, pass, 100*float64(pass)/float64(max(total, 1)))
	return b.String()
}

// Sample is every nth case of each kind, from the first: a set that holds
// every kind, in about the proportions of the whole.
func Sample(cases []Case, n int) []Case {
	seen := map[string]int{}
	var out []Case
	for _, c := range cases {
		if seen[c.Kind]%n == 0 {
			out = append(out, c)
		}
		seen[c.Kind]++
	}
	return out
}
