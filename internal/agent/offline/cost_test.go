package offline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
)

// longShapes are the shapes of long message that once made reading cost
// the square (or the cube) of the length: each is a phrase repeated up to
// the length asked, joined as a person would join it.
var longShapes = []struct {
	name, sep string
	parts     []string
}{
	{"prose", ", ", []string{"I went to the store and bought some bread", "then I called my mother and we talked about the weekend",
		"after that I need to fix the fence and paint the shed", "also remind me to email Bob about the report and the budget"}},
	{"adds", ", ", []string{"add buy milk", "call the bank and walk the dog", "pay rent", "book a table for friday and email HR"}},
	{"nouns", " and ", []string{"add bread and butter", "jam and honey", "eggs and bacon and cheese"}},
	{"requests", " and ", []string{"mark task 2 done", "delete task 3", "no wait, not that", "rename task 4 to walk the dog", "show my list"}},
	{"reasons", " ", []string{"delete task 5 because I sold it", "but keep task 2", "except the dentist", "all done"}},
	{"quotes", " ", []string{"don't 'add", "\"call mom", "it's 'the", "«fix"}},
	{"open quotes", " ", []string{"\"x"}},
	{"sentences", ". ", []string{"Add milk", "Thanks", "No wait", "Call the bank"}},
	{"numbered", "\n", []string{"add these:", "1. bread", "2. milk", "3) call mom", "- fix the fence", "* email Bob"}},
	{"one title", " ", []string{"remind me to", "look", "at", "the", "very", "long", "thing"}},
	{"emoji", " ", []string{"add coffee ☕", "🎉🎉", "and tea 🍵,", "🍰 🍰", "rename task 2 to cake 🎂"}},
}

// longText repeats a shape's parts up to n bytes.
func longText(parts []string, sep string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(parts[i%len(parts)])
	}
	return b.String()[:n]
}

// readingWork counts the work of one model call on msgs: its
// allocations, which are the same for one input in every run, and grow
// with what the reader makes of the text, where a timer would measure the
// machine. (Under the race detector, sync.Pool drops some of what is put
// back, so a few more come and go: the least of three runs is taken.)
func readingWork(msgs []agent.Message) float64 {
	m := New()
	runs := 1
	if raceDetector {
		runs = 3
	}
	least := -1.0
	for range runs {
		n := testing.AllocsPerRun(1, func() {
			_, _ = m.Stream(context.Background(), agent.Request{Messages: msgs}, nil)
		})
		if least < 0 || n < least {
			least = n
		}
	}
	return least
}

// Reading is about linear in the text: four times the text is about four
// times the work, never sixteen. The work is counted, not timed.
func TestReadingIsLinearInTheText(t *testing.T) {
	for _, shape := range longShapes {
		t.Run(shape.name, func(t *testing.T) {
			short := readingWork([]agent.Message{userSays(longText(shape.parts, shape.sep, 1000))})
			long := readingWork([]agent.Message{userSays(longText(shape.parts, shape.sep, 4000))})
			if ratio := long / short; ratio > 5.5 {
				t.Errorf("1,000 bytes take %.0f allocations, 4,000 bytes %.0f: %.1f times the work for 4 times the text", short, long, ratio)
			}
		})
	}
}

// A conversation of long messages is no slower a turn as it grows: each
// model call reads the messages a few turns back, each once. From the
// turn where the look back is whole, a turn's work stays the same: were
// it to grow with the conversation, the sixteenth turn would do about
// 16/9 of the ninth's.
func TestReadingAConversationIsBounded(t *testing.T) {
	settled, last := 2*memoryTurns+1, 16
	bound := 1.1
	if raceDetector {
		bound = 1.3
	}
	for _, shape := range longShapes {
		t.Run(shape.name, func(t *testing.T) {
			text := longText(shape.parts, shape.sep, 1000)
			var msgs []agent.Message
			var first float64
			for turn := 1; turn <= last; turn++ {
				msgs = append(msgs, userSays(text))
				switch turn {
				case settled:
					first = readingWork(msgs)
				case last:
					if work := readingWork(msgs); work > bound*first {
						t.Errorf("turn %d takes %.0f allocations, turn %d %.0f: a turn costs more as the conversation grows", settled, first, last, work)
					}
				}
				msgs = append(msgs, agent.Message{Role: agent.RoleAssistant, Content: "Okay."})
			}
		})
	}
}

// BenchmarkOfflineLongMessage reads one long message of each shape, as
// the first model call of a turn does.
func BenchmarkOfflineLongMessage(b *testing.B) {
	for _, shape := range longShapes {
		for _, n := range []int{1000, 4000} {
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				req := agent.Request{Messages: []agent.Message{userSays(longText(shape.parts, shape.sep, n))}}
				m := New()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.Stream(context.Background(), req, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
