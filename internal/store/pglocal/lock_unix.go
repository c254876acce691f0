//go:build unix

package pglocal

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockDir waits until this process alone starts the cluster in dir, and
// returns what lets the next start go ahead. Without it, two dev servers
// started at once would both find no server running and both start one:
// the second's fails, and stopping what it launched would stop the
// first's. The lock is the kernel's, on the directory itself, so it goes
// with a process that dies while it holds it; Go opens files close-on-exec,
// so the server pg_ctl starts does not hold it on.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the last descriptor releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
