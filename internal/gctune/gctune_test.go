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
	t.Parallel()
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

// keepLive allocates n bytes for the caller to keep live.
func keepLive(n int) [][]byte {
	live := make([][]byte, 0, n/(64<<10))
	for range n / (64 << 10) {
		live = append(live, make([]byte, 64<<10))
	}
	return live
}

func gogc() int { return int(read("/gc/gogc:percent")) }

func heapGoal() uint64 { return read("/gc/heap/goal:bytes") }

// read reads one of the runtime's metrics.
func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// withGOGC runs the test at GOGC=p and puts back what was there. GOGC and
// the heap goal are the process's, so a test that calls it runs alone, not
// in parallel.
func withGOGC(t *testing.T, p int) {
	old := debug.SetGCPercent(p)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

func TestPercentOfExtremes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ base, headroom uint64 }{
		{0, 1 << 63}, {1, 1 << 63}, {1 << 63, 1 << 63}, {1 << 63, 32 * mib}, {1<<64 - 1, 1<<64 - 1},
	} {
		if p := Percent(c.base, c.headroom); p < 100 || p > maxPercent {
			t.Errorf("Percent(%d, %d) = %d, want from 100 to %d", c.base, c.headroom, p, maxPercent)
		}
	}
}

// The runtime's own heap goal, after a collection, sits the headroom above
// the live heap while tuned, and at Go's default before and after.
func TestStartSetsTheHeapGoal(t *testing.T) {
	withGOGC(t, 100)
	live := keepLive(8 * mib)
	runtime.GC()
	plain, base := heapGoal(), read("/gc/heap/live:bytes")
	if plain > 3*base {
		t.Fatalf("heap goal %d over %d live at GOGC=100; want about twice the live heap", plain, base)
	}

	stop := Start(64 * mib)
	runtime.GC()
	tuned, live2 := heapGoal(), read("/gc/heap/live:bytes")
	if tuned < live2+64*mib || tuned > live2+72*mib {
		t.Errorf("heap goal %d over %d live with 64 MiB of headroom; want 64 MiB above the live heap", tuned, live2)
	}
	stop()
	if got := gogc(); got != 100 {
		t.Errorf("GOGC after stop = %d, want the 100 it was", got)
	}
	runtime.GC()
	if again := heapGoal(); again > 3*read("/gc/heap/live:bytes") {
		t.Errorf("heap goal %d after stop; want GOGC=100's, about twice the live heap", again)
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
