package http

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/nodetest"
)

// TestOpenAPILintsClean runs Redocly's linter on api/openapi.yaml with its
// recommended rules, every warning an error (api/redocly.yaml): client
// generators and documentation sites read the document as such linters do,
// so what they would stumble on fails here. The exceptions, each with its
// reason, are in api/.redocly.lint-ignore.yaml.
func TestOpenAPILintsClean(t *testing.T) {
	node, cli := nodetest.MustScript(t, "@redocly/cli", "Redocly CLI", "node_modules/@redocly/cli/bin/cli.js")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "lint", "--config", "../../api/redocly.yaml", "--format", "stylish", specFile)
	// The linter sends usage reports and looks for updates unless told not
	// to; a test reaches no one.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("api/openapi.yaml does not lint clean (%v):\n%s", err, out)
	}
}
