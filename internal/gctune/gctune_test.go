package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

const mib = 1 << 20

// goal is the heap goal the runtime sets for a collection base at GOGC p
// (mgcpacer.go: the live heap plus p percent of the base, never under
// 4 MiB × p/100), taking the live heap to be the whole base: the goal's
// distance from the live heap is the same either way.
func goal(base uint64, p int) uint64 {
	return max(base+base*uint64(p)/100, heapMinimum*uint64(p)/100)
}

func TestPercentLeavesAtLeastTheHeadroom(t *testing.T) {
	for _, headroom := range []uint64{1 * mib, 32 * mib, 256 * mib} {
		for _, base := range []uint64{0, 1, 100 << 10, 1 * mib, 3 * mib, 4 * mib, 5 * mib, 31 * mib, 32 * mib, 33 * mib, 1 << 30} {
			p := Percent(base, headroom)
			if p < 100 {
				t.Fatalf("Percent(%d, %d) = %d, below Go's default", base, headroom, p)
			}
			growth := goal(base, p) - base
			want := max(headroom, goal(base, 100)-base) // what GOGC=100 allows
			if growth < want {
				t.Errorf("base %d, headroom %d: GOGC %d grows the heap by %d, want at least %d", base, headroom, p, growth, want)
			}
			if growth > want+want/50+heapMinimum/100 {
				t.Errorf("base %d, headroom %d: GOGC %d grows the heap by %d, want about %d", base, headroom, p, growth, want)
			}
		}
	}
}

var sink []byte

// keepLive allocates n bytes for the caller to keep live.
func keepLive(n int) [][]byte {
	live := make([][]byte, 0, n/(64<<10))
	for range n / (64 << 10) {
		live = append(live, make([]byte, 64<<10))
	}
	return live
}

// collections allocates n bytes of garbage and counts the collections it took.
func collections(n int) uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	for range n / (64 << 10) {
		sink = make([]byte, 64<<10)
	}
	runtime.ReadMemStats(&ms)
	return ms.NumGC - before
}

func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// withGOGC runs the test at GOGC=p and puts back what was there.
func withGOGC(t *testing.T, p int) {
	old := debug.SetGCPercent(p)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

func TestPercentOfExtremes(t *testing.T) {
	for _, c := range []struct{ base, headroom uint64 }{
		{0, 1 << 63}, {1, 1 << 63}, {1 << 63, 1 << 63}, {1 << 63, 32 * mib}, {1<<64 - 1, 1<<64 - 1},
	} {
		if p := Percent(c.base, c.headroom); p < 100 || p > maxPercent {
			t.Errorf("Percent(%d, %d) = %d, want from 100 to %d", c.base, c.headroom, p, maxPercent)
		}
	}
}

func TestStartCollectsAfterTheHeadroom(t *testing.T) {
	withGOGC(t, 100)
	live := keepLive(8 * mib)
	runtime.GC()
	plain := collections(256 * mib)

	stop := Start(64 * mib)
	runtime.GC()
	tuned := collections(256 * mib)
	t.Logf("collections: %d tuned, %d at GOGC=100", tuned, plain)
	if tuned > 8 || tuned*2 > plain {
		t.Errorf("256 MiB of garbage over 8 MiB live took %d collections tuned for 64 MiB of headroom, %d at GOGC=100; want about 4 and 15", tuned, plain)
	}
	stop()
	if got := gogc(); got != 100 {
		t.Errorf("GOGC after stop = %d, want the 100 it was", got)
	}
	runtime.GC()
	if again := collections(64 * mib); again < 4 {
		t.Errorf("after stop, 64 MiB of garbage took %d collections; want GOGC=100's 8 or so", again)
	}
	runtime.KeepAlive(live)
}

func TestStartLeavesALargeHeapToGOGC(t *testing.T) {
	withGOGC(t, 100)
	live := keepLive(48 * mib)
	runtime.GC()
	stop := Start(16 * mib)
	defer stop()
	if got := gogc(); got != 100 {
		t.Errorf("GOGC with 48 MiB live and 16 MiB of headroom = %d, want 100", got)
	}
	runtime.KeepAlive(live)
}

func TestStartFollowsTheLiveHeap(t *testing.T) {
	withGOGC(t, 100)
	runtime.GC()
	stop := Start(16 * mib)
	defer stop()
	small := gogc()
	if small <= 100 {
		t.Fatalf("GOGC with a nearly empty heap and 16 MiB of headroom = %d, want more than 100", small)
	}
	live := keepLive(48 * mib)
	// The tuning runs after a collection, on the runtime's cleanup
	// goroutine; collect until it has.
	deadline := time.Now().Add(10 * time.Second)
	for gogc() != 100 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := gogc(); got != 100 {
		t.Errorf("GOGC once 48 MiB are live = %d, want 100 (it was %d with nothing live)", got, small)
	}
	runtime.KeepAlive(live)
}

func TestStartsNest(t *testing.T) {
	withGOGC(t, 120)
	live := keepLive(8 * mib)
	runtime.GC()
	stopLarge := Start(64 * mib)
	stopSmall := Start(16 * mib)
	both := gogc() // 64 MiB's: about 800 over 8 MiB
	stopLarge()
	stopLarge()     // a second call changes nothing
	small := gogc() // about 200
	if small <= 100 || both < 2*small {
		t.Errorf("GOGC with 64 and 16 MiB of headroom asked for = %d, with only 16 MiB = %d; want the larger's, about four times the smaller's", both, small)
	}
	stopSmall()
	if got := gogc(); got != 120 {
		t.Errorf("GOGC after the last stop = %d, want the 120 it was", got)
	}
	runtime.KeepAlive(live)
}

func TestStartWithoutHeadroomChangesNothing(t *testing.T) {
	withGOGC(t, 150)
	stop := Start(0)
	runtime.GC()
	if got := gogc(); got != 150 {
		t.Errorf("GOGC = %d after Start(0), want the 150 it was", got)
	}
	stop()
}
