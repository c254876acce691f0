// Package evaltest is the offline model's evaluation: realistic messages
// and short conversations, kept as text files a person reads and extends
// (internal/agent/offline/testdata/eval, one file per kind of message,
// the format below), one judge of what a conversation did, and the table
// of pass rates by kind. Two chats play the cases: Memory, the agent's
// loop with the real MCP task tools on an in-memory store, which the
// offline package's own test runs (fast, no database); and the chat
// engine on PostgreSQL, in internal/agent/offline/e2e, on a sample.
//
// A case file holds cases separated by blank lines:
//
//	# A place in a list is the list last shown; what was deleted is gone.
//
//	given: Buy groceries
//	given: [x] Pay bills
//	given: Call mom | after 6
//	say: show my tasks
//	say: delete the second one
//	want: Buy groceries
//	want: -
//	want: Call mom | after 6
//	calls: delete_task(2)
//
// given is the list before, a task a line, numbered from 1 in order:
// "[x] " marks a completed task, " | " sets off its description. say is
// what the person says, a message a line; "say: ---" starts a new
// conversation, in which the model knows nothing of what was said before.
// want is the list afterwards in the same notation: tasks added take the
// next numbers, and "-" marks a number that must be gone; "want:
// unchanged" says the list must be as given, "want: nothing" that it must
// be empty. calls, when the last message's tool calls matter, are those
// calls: "none", or calls such as "list_tasks(pending)",
// "complete_task(3)", "add_task(Buy milk)", "update_task(2, Call mom)".
// limit, on a known limit (docs/models.md lists them), says why it fails:
// the case must fail until the model learns it, and then lose the mark.
//
// A value written as a Go string in double quotes is that string: a
// message of two lines, "add milk\nadd eggs", or a task called
// "unchanged". Lines
// starting with # are comments: a paragraph of them followed by a blank
// line heads the cases after it, until the next such paragraph, and says
// what they pin; one written just above a case's lines is that case's
// own.
package evaltest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Case is one person's exchange with the model.
type Case struct {
	Kind  string // the name of its file: add, complete, follow-up…
	Pos   string // where it is written: file:line
	Group string // the comment heading its group: what the group pins
	Note  string // its own comment, if it has one
	Given []string
	Say   []string // a message each; NewConversation starts another conversation
	Want  []string // nil: unchanged
	Calls string   // "": the calls are not judged
	Limit string   // "": not a known limit
}

// NewConversation, said in a case, starts a new conversation.
const NewConversation = "---"

// The words of a want line that are not a task.
const (
	unchanged = "unchanged"
	nothing   = "nothing"
	gone      = "-"
)

// Ext is the extension of a case file.
const Ext = ".txt"

// Load reads every case file in dir, in the order of their names.
func Load(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*"+Ext))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no case files (*%s) in %s", Ext, dir)
	}
	var cases []Case
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		cs, err := Parse(filepath.Base(f), data)
		if err != nil {
			return nil, err
		}
		cases = append(cases, cs...)
	}
	return cases, nil
}

// Parse reads the cases of one file, name (its kind and Ext).
func Parse(name string, data []byte) ([]Case, error) {
	kind, ok := strings.CutSuffix(name, Ext)
	if !ok || kind == "" {
		return nil, fmt.Errorf("%s: a case file is named after its kind, ending in %s", name, Ext)
	}
	p := parser{name: name, kind: kind}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		p.line++
		if err := p.read(sc.Text()); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, p.line, err)
		}
	}
	if err := p.read(""); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, p.line, err)
	}
	return p.cases, sc.Err()
}

// parser reads a case file a line at a time.
type parser struct {
	name, kind string
	line       int
	group      string   // the heading of the cases to come
	comment    []string // comment lines not yet placed
	cur        *Case    // the case being read, if any
	wantSet    bool     // cur has want lines
	wantWord   bool     // cur's want line is "unchanged" or "nothing"
	cases      []Case
}

func (p *parser) read(line string) error {
	switch {
	case strings.TrimSpace(line) == "":
		return p.endParagraph()
	case strings.HasPrefix(line, "#"):
		if p.cur != nil {
			return errors.New("a comment goes above a case's lines, not among them")
		}
		p.comment = append(p.comment, strings.TrimSpace(strings.TrimPrefix(line, "#")))
		return nil
	}
	key, raw, ok := strings.Cut(line, ":")
	if !ok {
		return fmt.Errorf("%q is not a comment nor a line of a case (given:, say:, want:, calls: or limit:)", line)
	}
	value, err := unquote(strings.TrimSpace(raw))
	if err != nil {
		return err
	}
	if p.cur == nil {
		p.cur = &Case{Kind: p.kind, Pos: fmt.Sprintf("%s:%d", p.name, p.line), Group: p.group, Note: strings.Join(p.comment, " ")}
		p.comment, p.wantSet, p.wantWord = nil, false, false
	}
	return p.field(key, value, strings.HasPrefix(strings.TrimSpace(raw), `"`))
}

// field sets one line of the case being read; quoted says the value was
// written in quotes, and so is never one of a line's special words.
func (p *parser) field(key, value string, quoted bool) error {
	c := p.cur
	if value == "" {
		return fmt.Errorf("%s: needs a value", key)
	}
	switch {
	case key == "given" && len(c.Say) > 0:
		return errors.New("given lines come first")
	case key == "given" && value == gone:
		return errors.New(`a given list has no gaps: "-" is only for want`)
	case key == "given":
		c.Given = append(c.Given, value)
	case key == "say" && (c.Want != nil || p.wantSet || c.Calls != "" || c.Limit != ""):
		return errors.New("say lines come before want, calls and limit")
	case key == "say" && value == NewConversation && quoted:
		return errors.New(`a message "---" cannot be said: it starts a new conversation`)
	case key == "say":
		c.Say = append(c.Say, value)
	case key == "want" && (p.wantWord || !quoted && (value == unchanged || value == nothing) && p.wantSet):
		return fmt.Errorf("want: %s or want: %s is the only want line of a case", unchanged, nothing)
	case key == "want" && !quoted && (value == unchanged || value == nothing):
		if value == nothing {
			c.Want = []string{}
		}
		p.wantSet, p.wantWord = true, true
	case key == "want":
		c.Want = append(c.Want, value)
		p.wantSet = true
	case key == "calls" && c.Calls == "":
		c.Calls = value
	case key == "limit" && c.Limit == "":
		c.Limit = value
	case key == "calls" || key == "limit":
		return fmt.Errorf("a case has one %s line", key)
	default:
		return fmt.Errorf("%q is not a line of a case (given, say, want, calls or limit)", key+":")
	}
	return nil
}

// endParagraph ends what a blank line ends: a case, or a heading.
func (p *parser) endParagraph() error {
	switch {
	case p.cur != nil:
		c := p.cur
		p.cur = nil
		if len(c.Say) == 0 {
			return errors.New("a case says something: it needs say lines")
		}
		if !p.wantSet {
			return fmt.Errorf("a case says what the list must be afterwards: want lines, or want: %s", unchanged)
		}
		p.cases = append(p.cases, *c)
	case len(p.comment) > 0:
		p.group, p.comment = strings.Join(p.comment, " "), nil
	}
	return nil
}

// unquote reads a value written in double quotes as a Go string.
func unquote(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	v, err := strconv.Unquote(s)
	if err != nil {
		return "", fmt.Errorf("%s is not a string in Go's double quotes: %w", s, err)
	}
	return v, nil
}

// Format writes cases as a case file Parse reads back as they are; it
// heads each group with its comment, wrapped at width characters. Every
// case must be of the same kind.
func Format(cases []Case, width int) []byte {
	var b bytes.Buffer
	group := ""
	for i, c := range cases {
		if i > 0 {
			b.WriteByte('\n')
		}
		if c.Group != group || i == 0 && c.Group != "" {
			writeComment(&b, c.Group, width)
			b.WriteByte('\n')
			group = c.Group
		}
		writeComment(&b, c.Note, width)
		for _, t := range c.Given {
			writeLine(&b, "given", t, false)
		}
		for _, s := range c.Say {
			writeLine(&b, "say", s, false)
		}
		switch {
		case c.Want == nil:
			writeLine(&b, "want", unchanged, false)
		case len(c.Want) == 0:
			writeLine(&b, "want", nothing, false)
		}
		for _, t := range c.Want {
			writeLine(&b, "want", t, t == unchanged || t == nothing)
		}
		if c.Calls != "" {
			writeLine(&b, "calls", c.Calls, false)
		}
		if c.Limit != "" {
			writeLine(&b, "limit", c.Limit, false)
		}
	}
	return b.Bytes()
}

// writeLine writes one line of a case, its value quoted when it must be:
// when it would read as something else, or could not be seen.
func writeLine(b *bytes.Buffer, key, value string, special bool) {
	if special || needsQuotes(value) {
		value = strconv.Quote(value)
	}
	fmt.Fprintf(b, "%s: %s\n", key, value)
}

func needsQuotes(s string) bool {
	if s != strings.TrimSpace(s) || strings.HasPrefix(s, `"`) || !utf8.ValidString(s) {
		return true
	}
	return slices.ContainsFunc([]rune(s), func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' })
}

// writeComment writes text as comment lines of at most width characters.
func writeComment(b *bytes.Buffer, text string, width int) {
	line := "#"
	for _, w := range strings.Fields(text) {
		if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width && line != "#" {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	if line != "#" {
		b.WriteString(line + "\n")
	}
}
