package hnsw

import (
	"runtime"
	"time"
)

// yieldEvery is how long a worker of parallel (an insertion, a batch
// search) runs before it yields its P with runtime.Gosched. The Go
// scheduler preempts a running goroutine only after 10 ms, so a goroutine
// readied on the P of a long build (the writers a collection's applier
// has just woken, the logger back from its fsync: package collection's
// background builder shares the cores with them) waited for the whole
// build step unless another P was idle. A yield costs about a microsecond
// and finds the worker running again at once when nothing else waits.
const yieldEvery = 200 * time.Microsecond

// yielder yields once yieldEvery has passed since its last yield.
type yielder struct{ last time.Time }

func newYielder() yielder { return yielder{last: time.Now()} }

func (y *yielder) maybe() {
	if now := time.Now(); now.Sub(y.last) >= yieldEvery {
		runtime.Gosched()
		y.last = time.Now()
	}
}
