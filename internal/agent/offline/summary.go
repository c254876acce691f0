package offline

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/tasks"
)

var _ agent.Summarizer = (*Model)(nil)

// The sections of an offline summary, in the order it writes them, each
// with how many items it keeps: the first quarter of them and the newest
// rest, so that what a long conversation began with is still named (what
// the first turn added) and what it did last is too. Bounded so, a
// summary stays well under tasks.MaxSummaryRunes.
var summarySections = []struct {
	title string
	keep  int
}{
	{"Tasks added", 24},
	{"Tasks changed", 10},
	{"Tasks completed", 10},
	{"Tasks deleted", 10},
	{"Still open", 4},
	{"The person said", 8},
}

// summaryItemRunes bounds one item: a title, or a sentence of the person's.
const summaryItemRunes = 150

// Summarize writes, without a model, what the messages did, carried on
// from prior (a summary it wrote before): the tasks they added, changed,
// completed or deleted, from the tools' results; the requests still open
// (a reply that asked a question the next message did not settle); and
// what the person said in messages that made no call, which is where
// facts such as "my sister's name is Ana" are. It is deterministic: the
// same messages make the same summary.
func (*Model) Summarize(prior string, msgs []agent.Message) string {
	s := parseSummary(prior)
	turns := splitTurns(msgs)
	for i, t := range turns {
		asked := strings.HasSuffix(strings.TrimSpace(t.reply), "?")
		settled := i+1 < len(turns) && turnChanges(turns[i+1].rounds)
		switch {
		case s.addChanges(t.rounds):
			s.settle()
		case asked && !settled:
			s.add("Still open", fmt.Sprintf("%q (asked: %q)", oneLine(t.user, summaryItemRunes), oneLine(lastSentence(t.reply), summaryItemRunes)))
		case len(t.rounds) == 0 && len(strings.Fields(t.user)) >= 3:
			s.add("The person said", fmt.Sprintf("%q", oneLine(t.user, summaryItemRunes)))
		}
	}
	return s.String()
}

// summary is an offline summary's sections, by title.
type summary struct {
	items map[string][]string
}

// parseSummary reads back a summary Summarize wrote; anything else it
// keeps whole, as what the person said (a summary a model wrote before
// the server went offline is not lost).
func parseSummary(text string) *summary {
	s := &summary{items: map[string][]string{}}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line == "- …":
		case strings.HasPrefix(line, "- ") && section != "":
			s.items[section] = append(s.items[section], strings.TrimPrefix(line, "- "))
		case strings.HasSuffix(line, ":") && isSection(strings.TrimSuffix(line, ":")):
			section = strings.TrimSuffix(line, ":")
		default:
			s.add("The person said", oneLine(line, summaryItemRunes))
		}
	}
	return s
}

func isSection(title string) bool {
	for _, sec := range summarySections {
		if sec.title == title {
			return true
		}
	}
	return false
}

// add adds item to the section, once: a person who says the same thing
// again is summarised as saying it.
func (s *summary) add(section, item string) {
	if !slices.Contains(s.items[section], item) {
		s.items[section] = append(s.items[section], item)
	}
}

// settle closes the open requests: a later change answered them, or moved
// on from them.
func (s *summary) settle() { delete(s.items, "Still open") }

// addChanges adds the tasks the rounds changed, by their tools' results,
// and reports whether they changed any.
func (s *summary) addChanges(rounds []results.Round) bool {
	changed := false
	for _, r := range rounds {
		for _, c := range r.Calls {
			out := r.Outcome(c)
			if out.Error != "" || out.TaskID == 0 {
				continue
			}
			section := map[string]string{tasks.StatusCreated: "Tasks added", tasks.StatusUpdated: "Tasks changed",
				tasks.StatusDone: "Tasks completed", tasks.StatusDeleted: "Tasks deleted"}[out.Status]
			if section != "" {
				s.add(section, fmt.Sprintf("#%d %s", out.TaskID, oneLine(out.Title, summaryItemRunes)))
				changed = true
			}
		}
	}
	return changed
}

// turnChanges says whether the rounds changed a task.
func turnChanges(rounds []results.Round) bool {
	return (&summary{items: map[string][]string{}}).addChanges(rounds)
}

// String writes the sections that have items, each cut to its bound.
func (s *summary) String() string {
	var b strings.Builder
	for _, sec := range summarySections {
		items := s.items[sec.title]
		if len(items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", sec.title)
		if len(items) > sec.keep {
			first := sec.keep / 4
			items = append(append(items[:first:first], "…"), items[len(items)-(sec.keep-first):]...)
		}
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// lastSentence is the question a reply ends with.
func lastSentence(reply string) string {
	reply = strings.TrimSpace(reply)
	if i := strings.LastIndexAny(strings.TrimSuffix(reply, "?"), ".!?\n"); i >= 0 {
		return strings.TrimSpace(reply[i+1:])
	}
	return reply
}
