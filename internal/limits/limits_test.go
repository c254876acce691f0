package limits

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

// A replica renews the leases of the streams it holds open, in one
// statement, and stops renewing once it holds none.
func TestStreamLeasesAreRenewedWhileOpen(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	leases := NewLeases(store.NewLimits(pool), 2, slog.New(slog.DiscardHandler))
	user := storetest.UserID(t)
	release, err := leases.Open(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `UPDATE stream_leases SET lease_until = now() + interval '1 second' WHERE user_id = $1`, user); err != nil {
		t.Fatal(err)
	}
	if !leases.renewOnce() {
		t.Fatal("renewOnce found no lease to renew")
	}
	left := storetest.Count(t, `SELECT count(*) FROM stream_leases WHERE user_id = $1 AND lease_until > now() + $2::interval`,
		user, (streamLease - 5*time.Second).String())
	if left != 1 {
		t.Fatal("the lease was not renewed")
	}
	release()
	if n := storetest.Count(t, `SELECT count(*) FROM stream_leases WHERE user_id = $1`, user); n != 0 || leases.OpenStreams() != 0 {
		t.Fatalf("%d leases stored, %d open here, after the stream closed", n, leases.OpenStreams())
	}
	if leases.renewOnce() {
		t.Fatal("renewOnce renewed with no stream open")
	}
}
