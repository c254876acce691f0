package http

import (
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// Text stays text: a title or description that would steer a terminal, a
// log viewer or a spreadsheet showing it later (an escape sequence, a bell,
// a C1 control, a bidirectional override; a line break or tab in a title)
// is refused with a tool error the model can act on, and nothing is
// stored; what a person writes, accents, emoji and lines of a description
// included, comes back exactly as written, through MCP, the chat and REST.
func TestTextIsKeptAsWritten(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	c := mustMCPClient(t, s, mustToken(t, user))

	for _, args := range []map[string]any{
		{"title": "Buy café au lait ☕"},
		{"title": strings.Repeat("☕", 200)},
		{"title": "Cook 👩🏽‍🍳 for Zoë 🇫🇷", "description": "milk\n\teggs\r\n- bread\nשלום\u200f!"},
	} {
		got := c.mustCall(t, "add_task", args)
		if got["title"] != args["title"] {
			t.Errorf("add_task(%q) answered title %q", args["title"], got["title"])
		}
	}
	refused := []map[string]any{
		{"title": "red \x1b[31malert"},
		{"title": "ring\a"},
		{"title": "a\u009bb"},
		{"title": "\u202egpj.exe"},
		{"title": "two\nlines"},
		{"title": "two\tcolumns"},
		{"title": "fine", "description": "link \x1b]8;;https://example.com\x1b\\here"},
		{"title": "fine", "description": "a\u2067b"},
	}
	for _, args := range refused {
		res := c.call(t, "add_task", args, nil)
		if !res.IsError || !strings.Contains(resultText(res), "must") {
			t.Errorf("add_task(%q) = %q, want a tool error that says what the text must be", args, resultText(res))
		}
	}
	if res := c.call(t, "update_task", map[string]any{"task_id": 1, "title": "bell\a"}, nil); !res.IsError {
		t.Errorf("update_task with a BEL in its title = %q, want an error", resultText(res))
	}

	if r := s.chat(t, user, 0, "add buy oat milk 🥛"); r.status != 200 {
		t.Fatalf("chat: %d %s", r.status, r.body)
	}
	list := mustRESTTasks(t, s, user)
	var titles []string
	for _, task := range list {
		titles = append(titles, task.(map[string]any)["title"].(string))
	}
	want := []string{"Buy café au lait ☕", strings.Repeat("☕", 200), "Cook 👩🏽‍🍳 for Zoë 🇫🇷", "Buy oat milk 🥛"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Fatalf("titles = %q, want %q", titles, want)
	}
	if d := list[2].(map[string]any)["description"]; d != "milk\n\teggs\r\n- bread\nשלום\u200f!" {
		t.Errorf("description = %q, want its lines, tab and right-to-left mark as written", d)
	}
}
