// Package gctune keeps the garbage collector from running more often than a
// service with a small heap needs.
//
// Go starts a collection when the heap has grown by GOGC percent (100 by
// default) of what the last one left live, plus goroutine stacks and
// globals. taskchat keeps little live, a few megabytes, and every turn
// allocates about 90 KB that is garbage when the turn ends, so with GOGC=100
// it collects every few dozen turns, and marking took 15 % of its CPU at
// load where a service with a tenth of its live heap spent 7 %. Raising
// GOGC for good would cut that, but it would also multiply a large live
// heap (a replica holding many open streams) by the same factor.
//
// Start takes the middle way: after every collection it sets GOGC so that
// the next one starts when the heap has grown by the larger of headroom and
// what GOGC=100 allows. A small heap then grows by headroom bytes between
// collections, a heap past headroom is collected as Go's default would
// collect it, and a memory limit (GOMEMLIMIT) still applies as always.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
)

// DefaultHeadroom is the heap growth between collections Start is given by
// cmd/server unless GC_HEADROOM_MB says otherwise: about 350 turns of
// garbage, and a few percent of a small container's memory.
const DefaultHeadroom = 32 << 20

// Start tunes GOGC after every collection from now on, for at least headroom
// bytes of growth between collections, until stop is called. headroom 0
// tunes nothing. GOGC is the process's, so Starts nest: while several are
// running the largest headroom counts, and the last stop puts back the GOGC
// that was in force before the first Start.
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
// defaultHeapMinimum), which it scales with GOGC like everything else.
const heapMinimum = 4 << 20

// Percent is the GOGC that lets a heap whose collection base (live heap,
// stacks and globals) is base bytes grow by at least headroom bytes before
// the next collection, and never less than Go's default of 100.
//
// The runtime never sets a heap goal below 4 MiB × GOGC/100, so while base
// is under 4 MiB the percent is the one that puts that floor at base plus
// headroom; otherwise a nearly empty heap would be let grow to many times
// the headroom.
func Percent(base, headroom uint64) int {
	p := (base + headroom) * 100 / heapMinimum
	if base > 0 {
		p = min(p, (headroom*100+base-1)/base) // rounded up: at least headroom
	}
	return int(max(p, 100))
}
