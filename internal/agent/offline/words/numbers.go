package words

import (
	"strconv"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
)

// NumberWords are the task numbers people spell out.
var NumberWords = lexicon.Numbers[int64]("number words")

// NumberNouns are the words said before a task number: "number 3", "no. 3".
var NumberNouns = lexicon.Words("number nouns")

// TaskNumber returns the task number a word says ("5", "#5", "five"), or
// 0.
func TaskNumber(w Word) int64 {
	if n, ok := NumberWords[w.Low]; ok {
		return n
	}
	if n, err := strconv.ParseInt(NumberText(w.Low), 10, 64); err == nil && n > 0 {
		return n
	}
	return 0
}

// NumberText takes off what people write before a task number in the
// same word: "#3", "no.3", "nr.3", "num.3".
func NumberText(low string) string {
	for _, prefix := range []string{"#", "no.", "nr.", "num."} {
		if rest, ok := strings.CutPrefix(low, prefix); ok {
			return rest
		}
	}
	return low
}
