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
		if err := r.Drop(name); err != nil && !errors.Is(err, ErrUnknownCollection) {
			r.removeQuietly(tmp)
			return nil, err
		}
	}
	return r.adopt(name, tmp)
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
