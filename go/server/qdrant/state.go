package qdrant

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/server/internal/statefile"
	"github.com/strata-db/strata/go/vfs"
)

// collectionStates keeps one JSON document of type T per collection, in
// the state file <collection dir>/<file> (package statefile), read when
// first asked for and replaced whole on each change. It is keyed by
// *Collection, so a collection dropped and made again (by either door)
// starts from T's zero value, and one re-opened reads its file again; the
// file goes with the directory when the collection is dropped.
type collectionStates[T any] struct {
	file string // do not change: the name is on disk
	what string // for errors: "payload index declarations"
	fs   vfs.FS

	mu sync.Mutex
	by map[*collection.Collection]*T
}

func (x *collectionStates[T]) path(c *collection.Collection) string {
	return filepath.Join(c.Dir(), x.file)
}

// loadLocked returns c's document; x.mu is held.
func (x *collectionStates[T]) loadLocked(c *collection.Collection) (*T, error) {
	if v, ok := x.by[c]; ok {
		return v, nil
	}
	v := new(T)
	doc, err := statefile.Read(x.fs, x.path(c))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("qdrant: %s: %w", x.what, err)
	default:
		if err := json.Unmarshal(doc, v); err != nil {
			return nil, fmt.Errorf("qdrant: %s of %s: %w: %v", x.what, c.Dir(), statefile.ErrCorrupt, err)
		}
	}
	if x.by == nil {
		x.by = map[*collection.Collection]*T{}
	}
	x.by[c] = v
	return v, nil
}

// get returns a copy of c's document.
func (x *collectionStates[T]) get(c *collection.Collection) (T, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out T
	v, err := x.loadLocked(c)
	if err != nil {
		return out, err
	}
	return out, clone(v, &out)
}

// change applies edit to a copy of c's document; if edit succeeds the
// copy is written and becomes c's document.
func (x *collectionStates[T]) change(c *collection.Collection, edit func(*T) error) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	cur, err := x.loadLocked(c)
	if err != nil {
		return err
	}
	next := new(T)
	if err := clone(cur, next); err != nil {
		return err
	}
	if err := edit(next); err != nil {
		return err
	}
	doc, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if err := statefile.Write(x.fs, x.path(c), doc); err != nil {
		return fmt.Errorf("qdrant: %s: %w", x.what, err)
	}
	x.by[c] = next
	return nil
}

// forget drops c from memory.
func (x *collectionStates[T]) forget(c *collection.Collection) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.by, c)
}

// clone deep-copies src into dst through its JSON, which is what is kept.
func clone[T any](src, dst *T) error {
	b, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}
