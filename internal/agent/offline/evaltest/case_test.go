package evaltest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/tasks"
)

const sample = `# Follow-ups that refer to an earlier turn.

# A place in a list is the list last shown.

given: Buy groceries
given: [x] Pay bills | the gas one
say: show my tasks
say: delete the second one
want: Buy groceries
want: -
calls: delete_task(2)

# A new conversation knows nothing of the one before.
say: add buy milk
say: ---
say: delete it
want: Buy milk
calls: none

say: "add milk\nadd eggs"
want: Milk
want: "nothing"
want: "unchanged"

given: Buy groceries
say: delete everything
say: yes
want: nothing
limit: it asks again
`

// A case file reads as its package comment says.
func TestParseReadsTheNotation(t *testing.T) {
	got, err := Parse("follow-up.txt", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	group := "A place in a list is the list last shown."
	want := []Case{
		{Kind: "follow-up", Pos: "follow-up.txt:5", Group: group, Given: []string{"Buy groceries", "[x] Pay bills | the gas one"},
			Say: []string{"show my tasks", "delete the second one"}, Want: []string{"Buy groceries", "-"}, Calls: "delete_task(2)"},
		{Kind: "follow-up", Pos: "follow-up.txt:14", Group: group, Note: "A new conversation knows nothing of the one before.",
			Say: []string{"add buy milk", NewConversation, "delete it"}, Want: []string{"Buy milk"}, Calls: "none"},
		{Kind: "follow-up", Pos: "follow-up.txt:20", Group: group, Say: []string{"add milk\nadd eggs"}, Want: []string{"Milk", "nothing", "unchanged"}},
		{Kind: "follow-up", Pos: "follow-up.txt:25", Group: group, Given: []string{"Buy groceries"}, Say: []string{"delete everything", "yes"},
			Want: []string{}, Limit: "it asks again"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed\n%s\nwant\n%s", dump(got), dump(want))
	}
	if unchanged, err := Parse("list.txt", []byte("given: Call mom\nsay: list my tasks\nwant: unchanged\n")); err != nil || unchanged[0].Want != nil {
		t.Fatalf("want: unchanged = %#v, %v; want a nil list", unchanged, err)
	}
}

// A file that does not follow the notation is refused at the line that
// breaks it, never read as something else.
func TestParseRefusesWhatItCannotRead(t *testing.T) {
	for _, c := range []struct{ name, text, line string }{
		{"add.txt", "say: add milk\n", ":1:"},
		{"add.txt", "given: Milk\nwant: Milk\n", ":2:"},
		{"add.txt", "say: add milk\nwant: Milk\nsay: add eggs\n", ":3:"},
		{"add.txt", "say: add milk\nwant: unchanged\nwant: Milk\n", ":3:"},
		{"add.txt", "say: add milk\nwant: Milk\nwant: nothing\n", ":3:"},
		{"add.txt", "say: add milk\nwant: Milk\ncalls: none\ncalls: none\n", ":4:"},
		{"add.txt", "say: add milk\nsay:\nwant: Milk\n", ":2:"},
		{"add.txt", "say: add milk\ngiven: Milk\nwant: Milk\n", ":2:"},
		{"add.txt", "given: -\nsay: add milk\nwant: Milk\n", ":1:"},
		{"add.txt", "given: \"-\"\nsay: add milk\nwant: Milk\n", ":1:"},
		{"add.txt", "say: \"---\"\nwant: unchanged\n", ":1:"},
		{"add.txt", "say: \"add milk\nwant: Milk\n", ":1:"},
		{"add.txt", "say: add milk\nwants: Milk\n", ":2:"},
		{"add.txt", "say: add milk\n# a comment among its lines\nwant: Milk\n", ":2:"},
		{"add.txt", "add milk\n", ":1:"},
		{"add.md", "say: add milk\nwant: Milk\n", "add.md"},
	} {
		_, err := Parse(c.name, []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.line) {
			t.Errorf("%q: err = %v, want one at %s", c.text, err, c.line)
		}
	}
}

// Format writes what Parse reads back as it was, values that would read
// as something else quoted.
func TestFormatReadsBack(t *testing.T) {
	cases := []Case{
		{Kind: "add", Group: "Adding, said in many ways, with a heading long enough to be wrapped on two lines of comment.",
			Say: []string{"add milk"}, Want: []string{"Milk"}},
		{Kind: "add", Group: "Values that would read as something else.", Note: "Its own comment.",
			Given: []string{"  Leading space", `"Quoted" title`, "x\x00y"}, Say: []string{"add milk\nadd eggs", NewConversation, "add\ttab"},
			Want: []string{"-", "unchanged", "nothing", "Milk | two litres"}, Calls: "add_task(Milk)", Limit: "a reason"},
		{Kind: "add", Group: "Values that would read as something else.", Say: []string{"add nothing"}, Want: []string{}},
		{Kind: "add", Group: "Values that would read as something else.", Say: []string{"hello"}},
	}
	text := Format(cases, 40)
	got, err := Parse("add.txt", text)
	if err != nil {
		t.Fatalf("%v in\n%s", err, text)
	}
	for i := range got {
		got[i].Pos = ""
	}
	if !reflect.DeepEqual(got, cases) {
		t.Fatalf("read back\n%s\nwant\n%s\nfrom\n%s", dump(got), dump(cases), text)
	}
}

// The judge compares the list by number, gone numbers left out, and the
// last message's calls when the case says them.
func TestJudge(t *testing.T) {
	list := []tasks.Task{{ID: 1, Title: "Buy groceries"}, {ID: 3, Title: "Call mom", Description: "after 6", Completed: true}}
	calls := []Call{{Tool: "complete_task", Arguments: json.RawMessage(`{"task_id":3}`)}}
	given := []string{"Buy groceries", "Pay bills", "Call mom | after 6"}
	for _, c := range []struct {
		c    Case
		fail string
	}{
		{Case{Given: given, Want: []string{"Buy groceries", "-", "[x] Call mom | after 6"}, Calls: "complete_task(3)"}, ""},
		{Case{Given: given, Want: []string{"Buy groceries", "-", "[x] Call mom | after 6"}}, ""},
		{Case{Given: given, Want: []string{"Buy groceries", "-", "[x] Call mom | after 6"}, Calls: "none"}, "calls: got complete_task(3), want none"},
		{Case{Given: given, Want: []string{"Buy groceries", "-", "Call mom | after 6"}}, "list: got"},
		{Case{Given: given}, "2 [ ] Pay bills"},
		{Case{Given: given, Want: []string{"Buy groceries", "[x] Call mom | after 6"}}, "2 [x] Call mom"},
	} {
		got := Judge(c.c, calls, list)
		if c.fail == "" && got != "" || c.fail != "" && !strings.Contains(got, c.fail) {
			t.Errorf("%+v: judged %q, want %q", c.c, got, c.fail)
		}
	}
	described := DescribeCalls([]Call{{Tool: "list_tasks", Arguments: json.RawMessage(`{"status":"pending","limit":150}`)},
		{Tool: "update_task", Arguments: json.RawMessage(`{"task_id":2,"title":"Call mom","description":"after 6"}`)}})
	if want := "list_tasks(pending) update_task(2, Call mom, after 6)"; described != want {
		t.Errorf("DescribeCalls = %q, want %q", described, want)
	}
}

// A sample holds every kind, and every nth case of each from the first.
func TestSample(t *testing.T) {
	var cases []Case
	for i := range 7 {
		cases = append(cases, Case{Kind: "add", Pos: fmt.Sprint("add ", i)}, Case{Kind: "list", Pos: fmt.Sprint("list ", i)})
	}
	cases = append(cases, Case{Kind: "spec", Pos: "spec 0"})
	var got []string
	for _, c := range Sample(cases, 3) {
		got = append(got, c.Pos)
	}
	if want := "[add 0 list 0 add 3 list 3 add 6 list 6 spec 0]"; fmt.Sprint(got) != want {
		t.Fatalf("sample = %v, want %s", got, want)
	}
}

func dump(cases []Case) string {
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "%#v\n", c)
	}
	return b.String()
}
