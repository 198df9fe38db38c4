package registry

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/strata-db/strata/go/collection"
)

// Restore makes the collection called name from a snapshot archive
// (collection.Restore) and opens it. If name is taken and replace is set,
// the collection there is dropped, but only once the archive has been
// restored whole and checked under a .creating- name: a bad archive
// (an error matching collection.ErrArchive) leaves the old collection as
// it was. Without replace a taken name fails with collection.ErrExists.
func (r *Registry) Restore(name string, src io.Reader, replace bool) (*collection.Collection, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	r.mu.RLock()
	closed, taken := r.closed, r.entries[name] != nil
	r.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	if taken && !replace {
		return nil, fmt.Errorf("%w: %q", collection.ErrExists, name)
	}
	tmp := filepath.Join(r.dir, creatingPrefix+name+"-"+randomHex())
	if _, err := collection.Restore(src, tmp, r.tuningFor(name)); err != nil {
		return nil, err
	}
	if taken {
		c, err := r.replace(name, tmp)
		if !errors.Is(err, errNotThere) {
			return c, err
		}
		// Dropped meanwhile: the name is free, the restore creates it.
	}
	return r.adopt(name, tmp)
}

// errNotThere: replace found no collection of that name (dropped since
// Restore looked); the restore then creates it.
var errNotThere = errors.New("registry: no collection to replace")

// replace switches the collection name to the restored one at tmp (a
// .creating- directory) without ever leaving the name free: the entry
// stays taken (hidden) throughout, so no create can take the name between
// the old collection going and the new one coming, and if the new one
// will not open, the old one is put back.
func (r *Registry) replace(name, tmp string) (*collection.Collection, error) {
	r.mu.Lock()
	e := r.entries[name]
	switch {
	case r.closed:
		r.mu.Unlock()
		r.removeQuietly(tmp)
		return nil, ErrClosed
	case e == nil:
		r.mu.Unlock()
		return nil, errNotThere
	case e.hidden:
		r.mu.Unlock()
		r.removeQuietly(tmp)
		return nil, fmt.Errorf("%w: %q is being created, dropped or restored; try again", collection.ErrExists, name)
	}
	e.hidden = true
	r.mu.Unlock()
	e.op.Lock()
	c, err := r.switchTo(e, tmp)
	e.op.Unlock()
	r.mu.Lock()
	e.hidden = false
	r.mu.Unlock()
	return c, err
}

// switchTo closes e's collection, renames its directory aside
// (.replaced-), renames tmp into its place and opens it; the aside copy
// is removed once that open succeeded, and renamed back (and opened
// again) if any step failed. A crash in between leaves a .replaced-
// directory that Open settles: removed if <name> is there, renamed back
// if not. The caller holds e.op.
func (r *Registry) switchTo(e *entry, tmp string) (*collection.Collection, error) {
	name, dir := e.name, r.path(e.name)
	if old := e.c.Swap(nil); old != nil {
		// Its log holds every acknowledged write: a failed close loses
		// nothing if it is put back and opened again.
		if err := old.Close(); err != nil {
			r.log.Debug("closing a collection to replace it", "name", name, "error", err)
		}
	}
	undo := func(err error) (*collection.Collection, error) {
		r.removeQuietly(tmp)
		r.reopenLocked(e, r.opts.Now())
		return nil, fmt.Errorf("registry: restore %q: %w", name, err)
	}
	lock, err := collection.LockDir(r.fs, dir)
	if err != nil {
		return undo(err)
	}
	aside := filepath.Join(r.dir, replacedPrefix+name+"-"+randomHex())
	err = r.fs.Rename(dir, aside)
	lock.Close()
	if err != nil {
		return undo(err)
	}
	putBack := func(err error) (*collection.Collection, error) {
		if _, serr := r.fs.Stat(dir); serr == nil {
			if rerr := r.fs.Rename(dir, tmp); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		if rerr := r.fs.Rename(aside, dir); rerr != nil {
			// Open renames it back at the next start.
			err = errors.Join(err, rerr)
		}
		return undo(err)
	}
	if err := r.fs.Rename(tmp, dir); err != nil {
		return putBack(err)
	}
	if err := r.fs.SyncDir(r.dir); err != nil {
		return putBack(err)
	}
	c, err := collection.Open(dir, r.tuningFor(name))
	if err != nil {
		return putBack(err)
	}
	e.why.Store(nil)
	e.c.Store(c)
	if r.opts.Forget != nil {
		r.opts.Forget(name) // the old collection's series, as a drop forgets them
	}
	r.removeQuietly(aside)
	return c, nil
}

// adopt renames the closed collection at tmp (a .creating- directory) to
// name and opens it, as Create's last steps do.
func (r *Registry) adopt(name, tmp string) (*collection.Collection, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.removeQuietly(tmp)
		return nil, ErrClosed
	}
	if r.entries[name] != nil {
		r.mu.Unlock()
		r.removeQuietly(tmp)
		return nil, fmt.Errorf("%w: %q was created meanwhile", collection.ErrExists, name)
	}
	e := &entry{name: name, hidden: true}
	r.entries[name] = e
	r.mu.Unlock()

	c, err := r.place(name, tmp)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		delete(r.entries, name)
		return nil, err
	}
	if r.closed {
		c.Close()
		return nil, ErrClosed
	}
	e.c.Store(c)
	e.hidden = false
	return c, nil
}

// place moves tmp to name's directory, durably, and opens it.
func (r *Registry) place(name, tmp string) (*collection.Collection, error) {
	dir := r.path(name)
	if err := r.fs.Rename(tmp, dir); err != nil {
		r.removeQuietly(tmp)
		return nil, fmt.Errorf("registry: restore %q: %w", name, err)
	}
	if err := r.fs.SyncDir(r.dir); err != nil {
		r.discard(name)
		return nil, fmt.Errorf("registry: restore %q: %w", name, err)
	}
	c, err := collection.Open(dir, r.tuningFor(name))
	if err != nil {
		r.discard(name)
		return nil, fmt.Errorf("registry: restore %q: %w", name, err)
	}
	return c, nil
}
