package collection

import (
	"time"
)

// The reaper deletes expired points in the background. Reads never wait
// for it: they hide a point from the moment it expires (expiry.go). It
// deletes through the log, as any write does, so that the log, recovery
// and replicas agree on what is gone; and it is never on a write's ack
// path. Each look deletes at most Tuning.ReapBatch points, in one record
// of op 10 (opExpire), which the applier applies to an id only if its
// expiry is still the one the reaper saw: an upsert of the id between the
// look and the apply (a new version, which may not expire) wins.

// reapLoop looks every Tuning.ReapInterval, and at once when reapNow
// asks (tests, Reap).
func (c *Collection) reapLoop() {
	defer c.wg.Done()
	var tick <-chan time.Time
	if c.tuning.ReapInterval > 0 {
		t := time.NewTicker(c.tuning.ReapInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-c.stop:
			return
		case done := <-c.reapNow:
			c.reap()
			close(done)
		case <-tick:
			// A failure is recorded in c.failure and reported by the next
			// write; there is no caller to return it to here.
			c.reap()
		}
	}
}

// reap deletes up to ReapBatch points expired now and returns how many.
func (c *Collection) reap() (int, error) {
	if c.failed() != nil {
		return 0, c.failed()
	}
	keys, ats := c.expiry.due(c.now(), c.tuning.ReapBatch)
	if len(keys) == 0 {
		return 0, nil
	}
	rec := record{op: opExpire, ids: make([]ID, 0, len(keys)), expires: make([]int64, 0, len(keys))}
	for i, k := range keys {
		if id, ok := c.idOf(k); ok { // a string deleted since is gone with its expiry
			rec.ids, rec.expires = append(rec.ids, id), append(rec.expires, ats[i])
		}
	}
	if len(rec.ids) == 0 {
		return 0, nil
	}
	return c.submit(rec, nil)
}

// Reap asks the reaper for one look now (deleting up to Tuning.ReapBatch
// expired points) and waits for it: for tests and tools that run with a
// fake clock or without the periodic reaper (ReapInterval < 0).
func (c *Collection) Reap() error {
	if err := c.alive(); err != nil {
		return err
	}
	done := make(chan struct{})
	select {
	case c.reapNow <- done:
	case <-c.stop:
		return ErrClosed
	}
	<-done
	return nil
}
