package lexicon

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// TestDataFilesSayWhatEachSectionIsFor reads the real data files: they
// parse, and every section opens with a comment, because the comment is
// the only place that says what its words are for.
func TestDataFilesSayWhatEachSectionIsFor(t *testing.T) {
	l, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.sections) < 100 {
		t.Errorf("%d sections, want the model's more than 100", len(l.sections))
	}
	for name, s := range l.sections {
		if len(s.doc) == 0 {
			t.Errorf("section [%s] (%s) has no comment saying what it is for", name, s.at)
		}
	}
}

func TestParseRejectsMistakes(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"a section twice in one file",
			map[string]string{"data/a.txt": "[x]\n# X.\na\n\n[x]\nb\n"}, "a.txt:5: section [x] again, first at a.txt:1"},
		{"a section twice in two files",
			map[string]string{"data/a.txt": "[x]\na\n", "data/b.txt": "# B.\n[x]\nb\n"}, "b.txt:2: section [x] again, first at a.txt:1"},
		{"an entry before any section",
			map[string]string{"data/a.txt": "# Words.\nmilk\n[x]\na\n"}, `a.txt:2: "milk" comes before any [section]`},
		{"a section with no entries",
			map[string]string{"data/a.txt": "[x]\n# Nothing yet.\n\n[y]\na\n"}, "a.txt:1: section [x] has no entries"},
		{"the last section with no entries",
			map[string]string{"data/a.txt": "[y]\na\n[x]\n"}, "a.txt:3: section [x] has no entries"},
		{"a header not closed",
			map[string]string{"data/a.txt": "[x\na\n"}, "a.txt:1: a section header is [name], not [x"},
		{"a header with no name",
			map[string]string{"data/a.txt": "[ ]\na\n"}, "a.txt:1: a section header is [name], not [ ]"},
		{"no data files",
			map[string]string{"other/a.txt": "[x]\na\n"}, "no data/*.txt files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(mapFS(c.files))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("parse: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestSectionsReadAsTheGrammarNeedsThem reads one small file every way a
// section can be read.
func TestSectionsReadAsTheGrammarNeedsThem(t *testing.T) {
	l := mustParse(mapFS(map[string]string{"data/a.txt": `
# A file's comment.

[verbs]
# Verbs, written across lines.
buy call
  # A comment among the entries.
pay

[deletes]
get_rid_of drop
throw_away

[spellings]
# One a line.
tmrw tomorrow
u    you

[ordinals]
last -1
second 1
`}))
	if got, want := l.words("verbs"), map[string]bool{"buy": true, "call": true, "pay": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("words = %v, want %v", got, want)
	}
	if got, want := l.phrases("deletes"), [][]string{{"get", "rid", "of"}, {"drop"}, {"throw", "away"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("phrases = %q, want %q in the order written", got, want)
	}
	if got, want := l.pairs("spellings"), map[string]string{"tmrw": "tomorrow", "u": "you"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pairs = %v, want %v", got, want)
	}
	if got, want := numbers[int64](l, "ordinals"), map[string]int64{"last": -1, "second": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("numbers = %v, want %v", got, want)
	}
	if got := l.sections["verbs"].doc; !reflect.DeepEqual(got, []string{"Verbs, written across lines."}) {
		t.Errorf("doc = %q, want the comment before the entries only", got)
	}
	if got := l.unused(); len(got) != 0 {
		t.Errorf("unused = %q after reading every section", got)
	}
}

// TestMisreadSectionsStopTheProgram asks for sections in ways the data
// does not fit: each is a mistake found when the offline package starts.
func TestMisreadSectionsStopTheProgram(t *testing.T) {
	l := mustParse(mapFS(map[string]string{"data/a.txt": `
[deletes]
get_rid_of drop
[twice]
milk bread milk
[spellings]
tmrw tomorrow
u you your
[spelt twice]
tmrw tomorrow
tmrw tmrw
[ordinals]
last final
`}))
	cases := []struct {
		name string
		read func()
		want string
	}{
		{"a name not in the files", func() { l.words("verb") }, "no section [verb] in data/*.txt"},
		{"phrases read as words", func() { l.words("deletes") }, `section [deletes] (a.txt:2) holds the phrase "get_rid_of"`},
		{"a word listed twice", func() { l.words("twice") }, `section [twice] (a.txt:4) lists "milk" twice`},
		{"a phrase listed twice", func() { l.phrases("twice") }, `lists "milk" twice`},
		{"a pair of three words", func() { l.pairs("spellings") }, `"u you your" is not a word and what it stands for`},
		{"a pair's word twice", func() { l.pairs("spelt twice") }, `lists "tmrw" twice`},
		{"a number that is none", func() { numbers[int](l, "ordinals") }, `"final" is no number`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				got, _ := recover().(string)
				if !strings.Contains(got, c.want) {
					t.Errorf("panic %q, want one with %q", got, c.want)
				}
			}()
			c.read()
		})
	}
}

func TestUnusedListsTheSectionsNothingAskedFor(t *testing.T) {
	l := mustParse(mapFS(map[string]string{"data/a.txt": "[c]\nx\n[a]\nx\n[b]\nx\n"}))
	l.words("b")
	if got, want := l.unused(), []string{"a", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("unused = %q, want %q", got, want)
	}
}

func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, text := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	return fsys
}
