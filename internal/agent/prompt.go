package agent

import (
	_ "embed"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

//go:embed prompt.md
var defaultPrompt string

// Prompt is a system prompt template. The built-in one gives the date and
// time last, so that the text before them, the same for every turn, stays
// a prefix a provider can cache. It may use the placeholders
// {{user_id}}, {{date}} (the user's today: "Friday, 4 December 2026"),
// {{time}} ("17:05"), {{time_zone}} ("Europe/Paris, UTC+01:00") and
// {{model}}. The built-in prompt leaves out {{user_id}} on purpose: the
// model never needs to see who the user is, since the tools are already
// bound to them.
type Prompt struct {
	template string
	// last is the last rendering of a template without {{user_id}}: the
	// turns of a minute in one zone on one model get the same text, so
	// they share it.
	last *atomic.Pointer[renderedPrompt]
}

type renderedPrompt struct {
	date, clock, zone, model, text string
}

func newPrompt(template string) Prompt {
	return Prompt{template: template, last: &atomic.Pointer[renderedPrompt]{}}
}

// DefaultPrompt returns the built-in TodoAssistant prompt.
func DefaultPrompt() Prompt { return newPrompt(defaultPrompt) }

// LoadPrompt reads a prompt template from path (SYSTEM_PROMPT_FILE).
func LoadPrompt(path string) (Prompt, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Prompt{}, fmt.Errorf("system prompt: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return Prompt{}, fmt.Errorf("system prompt %s is empty", path)
	}
	return newPrompt(string(b)), nil
}

// Render fills in the placeholders for one turn, at now in the user's
// time zone (now's location).
func (p Prompt) Render(userID, model string, now time.Time) string {
	date, clock := now.Format("Monday, 2 January 2006"), now.Format("15:04")
	zone := now.Location().String() + ", UTC" + now.Format("-07:00")
	if zone == "UTC, UTC+00:00" {
		zone = "UTC"
	}
	shared := p.last != nil && !strings.Contains(p.template, "{{user_id}}")
	if shared {
		if r := p.last.Load(); r != nil && r.date == date && r.clock == clock && r.zone == zone && r.model == model {
			return r.text
		}
	}
	text := strings.NewReplacer("{{user_id}}", userID, "{{date}}", date, "{{time}}", clock, "{{time_zone}}", zone, "{{model}}", model).Replace(p.template)
	if shared {
		p.last.Store(&renderedPrompt{date: date, clock: clock, zone: zone, model: model, text: text})
	}
	return text
}
