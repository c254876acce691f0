package lexicon

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
)

//go:embed data/*.txt
var data embed.FS

// std is the lexicon of the data files, read when the program starts: a
// mistake in them stops it there, before any message is read.
var std = mustParse(data)

// Words returns the entries of a section as a set of single words: the
// offline model looks a word's lower-case form up in it.
func Words(name string) map[string]bool { return std.words(name) }

// Phrases returns the entries of a section as phrases, each the words of
// one entry ("get_rid_of" is ["get", "rid", "of"]), in the order written.
func Phrases(name string) [][]string { return std.phrases(name) }

// Pairs returns a section whose lines are each a word and the word it
// stands for ("tmrw tomorrow") as a map from the first to the second.
func Pairs(name string) map[string]string { return std.pairs(name) }

// Numbers returns a section whose lines are each a word and a number
// ("third 2") as a map from the word to the number.
func Numbers[N int | int64](name string) map[string]N { return numbers[N](std, name) }

// Unused returns the names of the sections no caller has asked for, in
// order: callers ask as they start, so a test finds those nothing reads.
func Unused() []string { return std.unused() }

// lexicon is the sections of a set of data files, and which were asked for.
type lexicon struct {
	sections map[string]*section
	mu       sync.Mutex
	asked    map[string]bool
}

// section is one named list: its entries line by line, in the order written.
type section struct {
	name  string
	at    string // file:line of its header, for messages
	doc   []string
	lines [][]string
}

// mustParse reads the data files or stops the program.
func mustParse(fsys fs.FS) *lexicon {
	l, err := parse(fsys)
	if err != nil {
		panic(err)
	}
	return l
}

// parse reads every data/*.txt file of fsys: a section named twice, an
// entry outside a section and a section with no entries are errors.
func parse(fsys fs.FS) (*lexicon, error) {
	names, err := fs.Glob(fsys, "data/*.txt")
	if err == nil && len(names) == 0 {
		err = fmt.Errorf("lexicon: no data/*.txt files")
	}
	if err != nil {
		return nil, err
	}
	l := &lexicon{sections: map[string]*section{}, asked: map[string]bool{}}
	for _, name := range names {
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if err := l.parseFile(path.Base(name), string(text)); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// parseFile adds the sections of one file.
func (l *lexicon) parseFile(file, text string) error {
	var cur *section
	for n, line := range strings.Split(text, "\n") {
		at := fmt.Sprintf("%s:%d", file, n+1)
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			if cur != nil && len(cur.lines) == 0 {
				cur.doc = append(cur.doc, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			}
		case strings.HasPrefix(line, "["):
			if err := finish(cur); err != nil {
				return err
			}
			name, ok := strings.CutSuffix(strings.TrimPrefix(line, "["), "]")
			if name = strings.TrimSpace(name); !ok || name == "" {
				return fmt.Errorf("lexicon: %s: a section header is [name], not %s", at, line)
			}
			if prev, dup := l.sections[name]; dup {
				return fmt.Errorf("lexicon: %s: section [%s] again, first at %s", at, name, prev.at)
			}
			cur = &section{name: name, at: at}
			l.sections[name] = cur
		case cur == nil:
			return fmt.Errorf("lexicon: %s: %q comes before any [section]", at, line)
		default:
			cur.lines = append(cur.lines, strings.Fields(line))
		}
	}
	return finish(cur)
}

// finish checks a section once all its lines are read.
func finish(s *section) error {
	if s != nil && len(s.lines) == 0 {
		return fmt.Errorf("lexicon: %s: section [%s] has no entries", s.at, s.name)
	}
	return nil
}

// section returns the named section and notes that it was asked for. A
// name the files do not hold is a mistake in the program, so it panics.
func (l *lexicon) section(name string) *section {
	s, ok := l.sections[name]
	if !ok {
		panic(fmt.Sprintf("lexicon: no section [%s] in data/*.txt", name))
	}
	l.mu.Lock()
	l.asked[name] = true
	l.mu.Unlock()
	return s
}

// distinct returns the section's entries, which as a list must not repeat.
func (s *section) distinct() []string {
	entries := slices.Concat(s.lines...)
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e] {
			panic(fmt.Sprintf("lexicon: section [%s] (%s) lists %q twice", s.name, s.at, e))
		}
		seen[e] = true
	}
	return entries
}

func (l *lexicon) words(name string) map[string]bool {
	s := l.section(name)
	set := map[string]bool{}
	for _, e := range s.distinct() {
		if strings.Contains(e, "_") {
			panic(fmt.Sprintf("lexicon: section [%s] (%s) holds the phrase %q: read it as phrases", name, s.at, e))
		}
		set[e] = true
	}
	return set
}

func (l *lexicon) phrases(name string) [][]string {
	var out [][]string
	for _, e := range l.section(name).distinct() {
		out = append(out, strings.Split(e, "_"))
	}
	return out
}

// pairs reads a section's lines as a word and what it stands for, each once.
func (l *lexicon) pairs(name string) map[string]string {
	s := l.section(name)
	m := map[string]string{}
	for _, line := range s.lines {
		if len(line) != 2 {
			panic(fmt.Sprintf("lexicon: section [%s] (%s): %q is not a word and what it stands for", name, s.at, strings.Join(line, " ")))
		}
		if _, dup := m[line[0]]; dup {
			panic(fmt.Sprintf("lexicon: section [%s] (%s) lists %q twice", name, s.at, line[0]))
		}
		m[line[0]] = line[1]
	}
	return m
}

func numbers[N int | int64](l *lexicon, name string) map[string]N {
	m := map[string]N{}
	for word, number := range l.pairs(name) {
		n, err := strconv.ParseInt(number, 10, 32)
		if err != nil {
			panic(fmt.Sprintf("lexicon: section [%s]: %q is no number", name, number))
		}
		m[word] = N(n)
	}
	return m
}

func (l *lexicon) unused() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for name := range l.sections {
		if !l.asked[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
