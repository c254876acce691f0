package agent

import (
	_ "embed"
	"fmt"
	"os"
	"strings"
	"time"
)

//go:embed prompt.md
var defaultPrompt string

// Prompt is a system prompt template. It may use the placeholders
// {{user_id}}, {{date}} and {{model}}. The built-in prompt leaves out
// {{user_id}} on purpose: the model never needs to see who the user is,
// since the tools are already bound to them.
type Prompt struct {
	template string
}

// DefaultPrompt returns the built-in TodoAssistant prompt.
func DefaultPrompt() Prompt { return Prompt{template: defaultPrompt} }

// LoadPrompt reads a prompt template from path (SYSTEM_PROMPT_FILE).
func LoadPrompt(path string) (Prompt, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Prompt{}, fmt.Errorf("system prompt: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return Prompt{}, fmt.Errorf("system prompt %s is empty", path)
	}
	return Prompt{template: string(b)}, nil
}

// Render fills in the placeholders for one turn.
func (p Prompt) Render(userID, model string, now time.Time) string {
	return strings.NewReplacer(
		"{{user_id}}", userID,
		"{{date}}", now.Format("Monday, 2 January 2006"),
		"{{model}}", model,
	).Replace(p.template)
}
