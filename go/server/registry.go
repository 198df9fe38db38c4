package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"

	"github.com/strata-db/strata/go/collection"
)

// validName is the only shape of collection name the server accepts: it
// keeps every name a single, plain directory below the data dir (no "..",
// no separators, no hidden files) and a plain URL path segment.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w, got %q", ErrBadName, truncateForMessage(name))
	}
	return nil
}

func truncateForMessage(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// registry holds the open collections, one per directory <dataDir>/<name>.
type registry struct {
	dataDir string
	tuning  collection.Tuning
	// observer, if set, makes the collection named name report its write
	// path (fsyncs, group commits, checkpoints) to the server's metrics.
	observer func(name string) collection.Observer

	mu   sync.RWMutex
	open map[string]*collection.Collection
}

// openRegistry opens every collection under dataDir (created if missing).
func openRegistry(dataDir string, tuning collection.Tuning, observer func(string) collection.Observer) (*registry, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("server: data dir: %w", err)
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return nil, fmt.Errorf("server: data dir: %w", err)
	}
	r := &registry{dataDir: dataDir, tuning: tuning, observer: observer, open: map[string]*collection.Collection{}}
	for _, e := range entries {
		dir := filepath.Join(dataDir, e.Name())
		if !e.IsDir() || !validName.MatchString(e.Name()) || !collection.Exists(nil, dir) {
			continue
		}
		c, err := collection.Open(dir, r.tuningFor(e.Name()))
		if err != nil {
			r.closeAll()
			return nil, fmt.Errorf("server: open collection %q: %w", e.Name(), err)
		}
		r.open[e.Name()] = c
	}
	return r, nil
}

// tuningFor is the tuning of the collection named name.
func (r *registry) tuningFor(name string) collection.Tuning {
	t := r.tuning
	if r.observer != nil {
		t.Observer = r.observer(name)
	}
	return t
}

func (r *registry) get(name string) (*collection.Collection, error) {
	r.mu.RLock()
	c := r.open[name]
	r.mu.RUnlock()
	if c == nil {
		if err := checkName(name); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %q", ErrUnknownCollection, name)
	}
	return c, nil
}

func (r *registry) names() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.open))
	for name := range r.open {
		names = append(names, name)
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// each calls fn for every open collection, in name order.
func (r *registry) each(fn func(name string, c *collection.Collection)) {
	for _, name := range r.names() {
		r.mu.RLock()
		c := r.open[name]
		r.mu.RUnlock()
		if c != nil {
			fn(name, c)
		}
	}
}

func (r *registry) create(name string, opts collection.Options) (*collection.Collection, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open[name] != nil {
		return nil, fmt.Errorf("%w: %q", collection.ErrExists, name)
	}
	dir := filepath.Join(r.dataDir, name)
	if _, err := os.Stat(dir); err == nil {
		// A directory that is not an open collection: a damaged one that
		// failed to open, or something else. Never write into it.
		return nil, fmt.Errorf("%w: %s exists and is not an open collection", collection.ErrExists, dir)
	}
	c, err := collection.Create(dir, opts, r.tuningFor(name))
	if err != nil {
		return nil, err
	}
	r.open[name] = c
	return c, nil
}

// drop closes and deletes a collection. Requests that still hold it fail
// with collection.ErrClosed.
func (r *registry) drop(name string) error {
	r.mu.Lock()
	c := r.open[name]
	delete(r.open, name)
	r.mu.Unlock()
	if c == nil {
		if err := checkName(name); err != nil {
			return err
		}
		return fmt.Errorf("%w: %q", ErrUnknownCollection, name)
	}
	// Drop needs the lock released, and Close is how it is released. Its
	// error (a failed final checkpoint) does not matter: the files go next.
	_ = c.Close()
	if err := collection.Drop(nil, c.Dir()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// closeAll closes every collection (each checkpoints if its log holds
// anything new) and returns the first error.
func (r *registry) closeAll() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for name, c := range r.open {
		if err := c.Close(); err != nil && first == nil {
			first = fmt.Errorf("server: close collection %q: %w", name, err)
		}
		delete(r.open, name)
	}
	return first
}
