// Package gctune keeps the garbage collector from running more often than a
// service with a small heap needs.
//
// Go sets its heap goal above what the last collection left live by GOGC
// percent (100 by default) of the live heap, goroutine stacks and globals
// together, and never under 4 MiB; it starts the next collection a little
// before the heap reaches the goal. taskchat keeps little live, a few
// megabytes, and every turn allocates about 90 KB that is garbage when the
// turn ends, so with GOGC=100 it collects every few dozen turns: in a load
// test's profile marking took 15.6 % of its CPU, where a hand-written turn
// doing the same work spent 7.1 %. Raising GOGC for good would cut
// that, but it would also multiply a large live heap (a replica holding
// many open streams) by the same factor.
//
// Start takes the middle way: after every collection it sets GOGC so that
// the heap goal is at least headroom bytes above the live heap, and never
// less than GOGC=100 puts it. A small heap then grows by about headroom
// bytes between collections, and a live heap larger than headroom is
// collected as Go's default would collect it. The collection that first
// finds a much larger live heap sets its goal with the percent the smaller
// one called for, until the tuning that follows it runs (on the runtime's
// cleanup goroutine, usually within milliseconds). A memory limit
// (GOMEMLIMIT) applies as always, and is the bound to set where memory is
// tight.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
)

// DefaultHeadroom is the headroom cmd/server gives Start unless
// GC_HEADROOM_MB says otherwise: about 350 turns of garbage, and a few
// percent of a small container's memory.
const DefaultHeadroom = 32 << 20

// Start tunes GOGC after every collection from now on, so that the heap goal
// is at least headroom bytes above the live heap, until stop is called.
// headroom 0 tunes nothing. GOGC is the process's, so Starts nest: while
// several are running the largest headroom counts, and the last stop puts
// back the GOGC that was in force before the first Start.
func Start(headroom uint64) (stop func()) {
	if headroom == 0 {
		return func() {}
	}
	mu.Lock()
	defer mu.Unlock()
	if running == nil {
		running = &tuner{samples: []metrics.Sample{
			{Name: "/gc/gogc:percent"},
			{Name: "/gc/heap/live:bytes"},
			{Name: "/gc/scan/stack:bytes"},
			{Name: "/gc/scan/globals:bytes"},
		}}
		metrics.Read(running.samples)
		running.before = int(running.samples[0].Value.Uint64())
		running.arm()
	}
	t := running
	t.headrooms = append(t.headrooms, headroom)
	t.tune()
	var once sync.Once
	return func() { once.Do(func() { t.stop(headroom) }) }
}

var (
	mu      sync.Mutex // running, and all of the tuner
	running *tuner     // nil while no Start is running
)

// tuner holds what a tuning needs between collections.
type tuner struct {
	headrooms []uint64 // one per running Start
	before    int      // GOGC before the first Start
	samples   []metrics.Sample
}

// sentinel is the object whose cleanup marks the end of a collection. It
// holds a pointer so that it is never combined with other small objects,
// whose cleanups would wait for all of them.
type sentinel struct{ _ *byte }

// arm allocates a sentinel and drops it: the collection that finds it
// unreachable runs its cleanup, which tunes and arms the next one.
func (t *tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *tuner) {
		mu.Lock()
		defer mu.Unlock()
		if running == t {
			t.tune()
			t.arm()
		}
	}, t)
}

// tune sets GOGC from what the last collection found live.
func (t *tuner) tune() {
	metrics.Read(t.samples)
	base := t.samples[1].Value.Uint64() + t.samples[2].Value.Uint64() + t.samples[3].Value.Uint64()
	debug.SetGCPercent(Percent(base, slices.Max(t.headrooms)))
}

// stop ends one Start's share of the tuning.
func (t *tuner) stop(headroom uint64) {
	mu.Lock()
	defer mu.Unlock()
	i := slices.Index(t.headrooms, headroom)
	t.headrooms = slices.Delete(t.headrooms, i, i+1)
	if len(t.headrooms) > 0 {
		t.tune()
		return
	}
	running = nil
	debug.SetGCPercent(t.before)
}

// heapMinimum is the runtime's least heap goal at GOGC=100 (its
// defaultHeapMinimum, 4 MiB unless the runtime is built with
// GOEXPERIMENT=heapminimum512kib), which it scales with GOGC like the rest
// of the goal.
const heapMinimum = 4 << 20

// maxHeadroom bounds the headroom Percent works with (1 PiB), so that its
// arithmetic cannot overflow.
const maxHeadroom = 1 << 50

// Percent is the GOGC that puts the heap goal at least headroom bytes above
// the live heap, for a collection base (live heap, stacks and globals) of
// base bytes, and never below Go's default of 100.
//
// The runtime never sets a heap goal below 4 MiB × GOGC/100, so while base
// is under 4 MiB the percent is the one that puts that floor at base plus
// headroom; otherwise a nearly empty heap would be let grow to many times
// the headroom.
func Percent(base, headroom uint64) int {
	base, headroom = min(base, maxHeadroom), min(headroom, maxHeadroom)
	p := ((base+headroom)*100 + heapMinimum - 1) / heapMinimum // rounded up: at least headroom
	if base > 0 {
		p = min(p, (headroom*100+base-1)/base)
	}
	return int(min(max(p, 100), maxPercent))
}

// maxPercent is the largest GOGC Percent gives: 2^31-1, the runtime's own
// bound, which a headroom of a petabyte over a heap of a few bytes reaches.
const maxPercent = 1<<31 - 1
