package runs

import "sync"

// writers is how many of a replica's turns write their events at once. A
// turn's timer only queues it; these few goroutines write, so a burst of
// turns (a thousand streams opened within a flush interval) neither waits
// for the database on a thousand goroutines, nor leaves their grown
// stacks behind, nor queues a thousand requests for the pool's
// connections.
const writers = 4

// writeQueue is the turns waiting for a writer, in order.
type writeQueue struct {
	mu     sync.Mutex
	ready  *sync.Cond
	turns  []*Turn
	closed bool
	done   sync.WaitGroup
}

// start starts the writers of q.
func (q *writeQueue) start() {
	q.ready = sync.NewCond(&q.mu)
	for range writers {
		q.done.Go(q.work)
	}
}

// add queues t for a writer; after close it drops it (its End writes
// what it has).
func (q *writeQueue) add(t *Turn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.turns = append(q.turns, t)
		q.ready.Signal()
	}
}

// work writes the queued turns' events until the queue closes.
func (q *writeQueue) work() {
	for {
		q.mu.Lock()
		for len(q.turns) == 0 && !q.closed {
			q.ready.Wait()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		t := q.turns[0]
		q.turns[0] = nil
		q.turns = q.turns[1:]
		q.mu.Unlock()
		t.flush()
	}
}

// close stops the writers, once the writes under way end.
func (q *writeQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.turns = nil
	q.ready.Broadcast()
	q.mu.Unlock()
	q.done.Wait()
}
