package logtest_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/taskchat/taskchat/internal/logtest"
)

// A logger writing from many goroutines while the test reads loses no
// line and tears none: the race detector and the count both check it.
func TestBufferTakesWritesAndReadsAtOnce(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				log.Info("line", "writer", i, "n", j)
				_ = logs.String()
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, "msg=line writer=") {
			t.Fatalf("torn line %q", l)
		}
	}
}

func ExampleBuffer() {
	var logs logtest.Buffer
	slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})).Info("listening", "addr", "127.0.0.1:8080")
	fmt.Print(logs.String())
	// Output: {"level":"INFO","msg":"listening","addr":"127.0.0.1:8080"}
}
