package collection

import (
	"fmt"
	"runtime"
)

// The builder: moving the tails' rows into the fields' graphs.
//
// apply appends every value to its field's tail (segment.Tail) and wakes
// the caller; one builder goroutine takes the rows of each tail in order,
// at most buildBatch at a time, and adds them to the field's index in one
// parallel hnsw.Index.Add (the removals of the batch's tombstones with
// one Remove), then advances the tail past them. A quantized field trains
// its SQ8 ranges on its first put, at apply time (fields.go, put), so
// the codes do not depend on the builder's timing and the tail computes
// the graph's distances and returns its reconstructions from the start.
//
// Backpressure: once a field's tail holds Tuning.TailRows rows or
// Tuning.TailBytes bytes not yet built, apply waits for the builder
// before it wakes the group's callers, so writers slow down to the
// builder's pace instead of making every query's exact scan longer.
// Replay on Open does not wait (the builder starts after it): a reopened
// collection may hold a longer tail, which the builder works off while
// queries scan it and writers wait.

// buildBatch bounds the rows of one build step (one parallel Add).
const buildBatch = 4096

// buildLoop is the builder goroutine.
func (c *Collection) buildLoop() {
	defer c.buildWG.Done()
	for {
		worked := false
		for _, f := range c.fields.Load().fields {
			if c.failed() != nil {
				break
			}
			n, err := c.buildStep(f, c.builderThreads())
			if err != nil {
				c.fail(fmt.Errorf("build vector field %q: %w", f.Name, err))
				break
			}
			worked = worked || n > 0
		}
		if c.failed() != nil {
			// Nothing is built any more: release whoever waits on it.
			for _, f := range c.fields.Load().fields {
				f.tail.Stop()
			}
		}
		if worked {
			continue
		}
		select {
		case <-c.buildStop:
			return
		case <-c.buildKick:
		}
	}
}

// builderThreads is how many goroutines the background builder's Add
// runs on: Tuning.Threads if set, else half the cores (at least one), as
// a background merge takes. With every core, the ack path's goroutines
// (logger, applier, the woken writers) and the queries queued behind the
// builder's until the scheduler preempted it (every 10 ms): single-row
// upserts from 8 writers waited 4.5 ms at the median with the builder
// running against 0.8 ms without it. A checkpoint's build of the rows
// before its fence, which holds the builder back, takes every core
// (Tuning.Threads), as the drain under applyMu it replaced did: on half
// of them batch-of-100 ingest at 200k fell from 12.5k to 8.3k rows/s
// (TestCheckpointPauseBench), the rows past the fence waiting for it.
func (c *Collection) builderThreads() int {
	if c.tuning.Threads > 0 {
		return c.tuning.Threads
	}
	return max(1, runtime.NumCPU()/2)
}

// kickBuilder tells the builder rows are waiting.
func (c *Collection) kickBuilder() {
	select {
	case c.buildKick <- struct{}{}:
	default:
	}
}

// buildStep moves the next batch of f's tail into its index and returns
// how many rows it moved.
func (c *Collection) buildStep(f *vectorField, threads int) (int, error) {
	f.buildMu.Lock()
	defer f.buildMu.Unlock()
	return f.buildLocked(threads)
}

// buildLocked is buildStep; the caller holds f.buildMu.
func (f *vectorField) buildLocked(threads int) (int, error) {
	b := f.tail.Next(buildBatch)
	if b.To == b.From {
		return 0, nil
	}
	if len(b.Keys) > 0 {
		if err := f.index.Add(b.Vectors, b.Keys, threads); err != nil {
			return 0, err
		}
	}
	if len(b.Removed) > 0 {
		if _, err := f.index.Remove(b.Removed); err != nil {
			return 0, err
		}
	}
	f.tail.Advance(b)
	return int(b.To - b.From), nil
}

// drainLocked builds every field's tail to its end; the caller holds
// applyMu, so nothing is appended meanwhile, and checkpointMu, so no
// checkpoint's fence stops the build short (checkpoint.go).
func (c *Collection) drainLocked() error {
	for _, f := range c.fields.Load().fields {
		for f.tail.Len() > 0 {
			if _, err := c.buildStep(f, c.tuning.Threads); err != nil {
				return fmt.Errorf("build vector field %q: %w", f.Name, err)
			}
		}
	}
	return nil
}

// waitBuilt waits (holding no lock) until the builder has built every row
// appended so far, so that a checkpoint's build to its fences, which
// holds the builder back, has little left.
func (c *Collection) waitBuilt() {
	if !c.building.Load() {
		return
	}
	for _, f := range c.fields.Load().fields {
		f.tail.WaitBuilt(f.tail.Appended())
	}
}

// backpressure waits until every field's tail is below the bounds; apply
// calls it, under applyMu, before waking a group's callers. It kicks the
// builder only when it must wait for it: below the bounds the logger (or
// applyLoop) kicks it after the group's callers are woken (commit.go).
func (c *Collection) backpressure() {
	if !c.building.Load() {
		return
	}
	for _, f := range c.fields.Load().fields {
		if f.tail.Len() >= c.tuning.TailRows || f.tail.Bytes() >= c.tuning.TailBytes {
			c.kickBuilder()
			f.tail.WaitBelow(c.tuning.TailRows, c.tuning.TailBytes)
		}
	}
}

// stopBuilder stops the builder goroutine (after the applier, whose
// backpressure waits on it) and releases every waiter.
func (c *Collection) stopBuilder() {
	if !c.building.Swap(false) {
		return
	}
	close(c.buildStop)
	c.buildWG.Wait()
	for _, f := range c.fields.Load().fields {
		f.tail.Stop()
	}
}

// tailStats sums the rows waiting in the tails and those built since open.
func (c *Collection) tailStats() (rows int, built int64) {
	for _, f := range c.fields.Load().fields {
		rows += f.tail.Len()
		built += f.tail.Built()
	}
	return rows, built
}
