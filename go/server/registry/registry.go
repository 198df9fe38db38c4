package registry

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/vfs"
)

// Prefixes of the data directory's entries that are not collections; see
// the package doc. Do not change: start-up removes what they name.
const (
	creatingPrefix = ".creating-"
	droppedPrefix  = ".dropped-"
	replacedPrefix = ".replaced-"
	probePrefix    = ".probe-"
)

// probeBytes is what the probe writes: a block, as a real write needs.
const probeBytes = 4096

const (
	defaultMinBackoff = time.Second
	defaultMaxBackoff = 5 * time.Minute
)

// validName is the only shape of collection name: it keeps every name a
// single, plain directory below the data dir (no "..", no separators, no
// hidden files) and a plain URL path segment.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// CheckName returns an error matching ErrBadName unless name can name a
// collection.
func CheckName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w, got %.80q", ErrBadName, name)
	}
	return nil
}

// State is what a collection can be asked for.
type State string

const (
	// StateReady: open, answering reads and writes.
	StateReady State = "ready"
	// StateFailed: open but refusing writes (collection.ErrFailed), or
	// not open at all; either way waiting to be re-opened.
	StateFailed State = "failed"
)

// Options configure a Registry; zero values pick the defaults named.
type Options struct {
	// FS is where the data directory lives; default vfs.Default. Every
	// collection is opened on it (it overrides Tuning.FS).
	FS vfs.FS
	// Tuning is given to every collection opened or created.
	Tuning collection.Tuning
	// Observer, if set, gives each collection, by name, the observer of
	// its write path (Tuning.Observer).
	Observer func(name string) collection.Observer
	// Forget, if set, is called with the name of each dropped collection,
	// before the name can be created again (metrics delete its series).
	Forget func(name string)
	// Logger receives one line per collection that fails, is re-opened or
	// is swept away at start-up; default slog.Default().
	Logger *slog.Logger
	// MinBackoff is the wait before re-opening a failed collection again
	// after a failed attempt, doubled by each further failed attempt up to
	// MaxBackoff; defaults 1 s and 5 min.
	MinBackoff, MaxBackoff time.Duration
	// Ticks, if set, replaces the ticker (every MinBackoff) on whose
	// ticks RetryDue runs with the tick's time: tests drive the retries
	// through it, without waiting on the clock.
	Ticks <-chan time.Time
	// Now is the clock that schedules the retries of failures found
	// outside RetryDue (at Open, by Reopen); default time.Now.
	Now func() time.Time
}

// Registry holds the collections of one data directory. All methods are
// safe for concurrent use.
type Registry struct {
	dir  string
	fs   vfs.FS
	opts Options
	log  *slog.Logger

	mu      sync.RWMutex
	entries map[string]*entry
	closed  bool

	done    chan struct{}
	retries sync.WaitGroup
}

// entry is one name of the data directory.
type entry struct {
	name string
	// hidden: being created or dropped. The name is taken, but Get and
	// the listings do not show it. Guarded by Registry.mu.
	hidden bool

	op sync.Mutex // serialises re-opening, dropping and closing

	c   atomic.Pointer[collection.Collection] // nil while not open
	why atomic.Pointer[error]                 // why it is not open

	mu        sync.Mutex // guards what follows
	attempts  int        // re-open attempts since it last failed
	nextRetry time.Time
	reopens   int // successful re-opens
}

// Open opens every collection under dir (created if missing), finishing or
// undoing the creates and drops a crash interrupted. A collection that will
// not open is listed as failed and retried; it does not fail Open.
func Open(dir string, opts Options) (*Registry, error) {
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = defaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(defaultMaxBackoff, opts.MinBackoff)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Registry{dir: dir, fs: opts.FS, opts: opts, log: opts.Logger, entries: map[string]*entry{},
		done: make(chan struct{})}
	if err := vfs.MkdirAllDurable(r.fs, dir); err != nil {
		return nil, fmt.Errorf("registry: data dir: %w", err)
	}
	names, err := r.fs.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: data dir: %w", err)
	}
	swept := false
	for _, name := range names {
		path := filepath.Join(dir, name)
		switch {
		case strings.HasPrefix(name, creatingPrefix):
			swept = r.sweep(path, "undoing an interrupted create") || swept
		case strings.HasPrefix(name, droppedPrefix):
			swept = r.sweep(path, "finishing an interrupted drop") || swept
		case strings.HasPrefix(name, replacedPrefix):
			swept = r.settleReplaced(name) || swept
		case strings.HasPrefix(name, probePrefix):
			if err := r.fs.Remove(path); err == nil {
				swept = true
			}
		case validName.MatchString(name):
			if fi, err := r.fs.Stat(path); err != nil || !fi.IsDir() {
				continue
			}
			switch {
			case collection.Exists(r.fs, path):
				r.entries[name] = r.openEntry(name)
			case collection.IsLeftover(r.fs, path):
				swept = r.sweep(path, "removing the leftover of an unfinished create or drop") || swept
			default:
				r.log.Warn("not a collection (no CURRENT file); left alone, and its name cannot be created",
					"dir", path)
			}
		}
	}
	if swept {
		if err := r.fs.SyncDir(dir); err != nil {
			r.log.Warn("data dir: fsync after removing leftovers", "dir", dir, "error", err)
		}
	}
	ticks := opts.Ticks
	var ticker *time.Ticker
	if ticks == nil {
		ticker = time.NewTicker(opts.MinBackoff)
		ticks = ticker.C
	}
	r.retries.Add(1)
	go func() {
		defer r.retries.Done()
		if ticker != nil {
			defer ticker.Stop()
		}
		for {
			select {
			case now := <-ticks:
				r.RetryDue(now)
			case <-r.done:
				return
			}
		}
	}()
	return r, nil
}

// openEntry opens the collection name at start-up; a failure is recorded
// in the entry and retried after MinBackoff.
func (r *Registry) openEntry(name string) *entry {
	e := &entry{name: name}
	c, err := collection.Open(r.path(name), r.tuningFor(name))
	if err != nil {
		r.log.Error("collection will not open; serving the others and retrying", "name", name, "error", err)
		e.why.Store(&err)
		e.attempts = 1
		e.nextRetry = r.opts.Now().Add(r.backoff(1))
		return e
	}
	e.c.Store(c)
	return e
}

// sweep removes path, a directory of a create or drop that did not finish,
// unless someone holds its lock. It reports whether it removed it.
// settleReplaced finishes or undoes the restore that a crash interrupted
// after it set collection <name> aside as aside (.replaced-<name>-<hex>):
// removed if <name> is a collection again (the switch was done), renamed
// back and opened if not. It reports whether the data dir changed.
func (r *Registry) settleReplaced(aside string) bool {
	rest := strings.TrimPrefix(aside, replacedPrefix)
	cut := strings.LastIndexByte(rest, '-')
	if cut <= 0 || !validName.MatchString(rest[:cut]) {
		r.log.Warn("not a set-aside collection; left alone", "dir", aside)
		return false
	}
	name, path := rest[:cut], filepath.Join(r.dir, aside)
	if collection.Exists(r.fs, r.path(name)) {
		return r.sweep(path, "finishing an interrupted restore")
	}
	if _, err := r.fs.Stat(r.path(name)); err == nil {
		// A partial <name> (a rename that did not finish): the set-aside
		// copy is the collection; keep both and say so.
		r.log.Warn("an interrupted restore left both the old collection and a partial new one; left alone",
			"dir", path, "name", name)
		return false
	}
	if err := r.fs.Rename(path, r.path(name)); err != nil {
		r.log.Warn("an interrupted restore's old collection not put back", "dir", path, "error", err)
		return false
	}
	r.log.Info("undoing an interrupted restore: the old collection is back", "name", name)
	r.entries[name] = r.openEntry(name)
	return true
}

func (r *Registry) sweep(path, why string) bool {
	lock, err := collection.LockDir(r.fs, path)
	if err != nil {
		r.log.Warn("leftover directory not removed", "dir", path, "error", err)
		return false
	}
	err = r.fs.RemoveAll(path)
	lock.Close() // its file went with the directory
	if err != nil {
		r.log.Warn("leftover directory not removed", "dir", path, "error", err)
		return false
	}
	r.log.Info(why, "dir", path)
	return true
}

func (r *Registry) path(name string) string { return filepath.Join(r.dir, name) }

// Dir is the data directory.
func (r *Registry) Dir() string { return r.dir }

// FS is the file system the data directory lives on.
func (r *Registry) FS() vfs.FS { return r.fs }

// tuningFor is the tuning of the collection named name.
func (r *Registry) tuningFor(name string) collection.Tuning {
	t := r.opts.Tuning
	t.FS = r.fs
	if r.opts.Observer != nil {
		t.Observer = r.opts.Observer(name)
	}
	return t
}

// backoff is the wait after the attempt-th failed attempt.
func (r *Registry) backoff(attempt int) time.Duration {
	d := r.opts.MinBackoff
	for i := 1; i < attempt && d < r.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, r.opts.MaxBackoff)
}

// visible returns the entry called name, or the error a caller gets for a
// name with no collection.
func (r *Registry) visible(name string) (*entry, error) {
	r.mu.RLock()
	e := r.entries[name]
	closed, hidden := r.closed, e != nil && e.hidden
	r.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	if e == nil || hidden {
		if err := CheckName(name); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %q", ErrUnknownCollection, name)
	}
	return e, nil
}

// Get returns the open collection called name. The error matches
// ErrUnknownCollection, ErrBadName for a name no collection can have, or
// ErrUnavailable for a collection that is not open.
func (r *Registry) Get(name string) (*collection.Collection, error) {
	e, err := r.visible(name)
	if err != nil {
		return nil, err
	}
	if c := e.c.Load(); c != nil {
		return c, nil
	}
	return nil, e.unavailable()
}

func (e *entry) unavailable() error {
	why := "being re-opened"
	if p := e.why.Load(); p != nil {
		why = (*p).Error()
	}
	return fmt.Errorf("%w: %q is not open (it is retried by itself): %s", ErrUnavailable, e.name, why)
}

// Names names the collections, open or failed, in order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.entries))
	for name, e := range r.entries {
		if !e.hidden {
			names = append(names, name)
		}
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// Status is what Registry.Status says about one collection.
type Status struct {
	Name  string
	State State
	// Error says why the collection is failed.
	Error string
	// Collection is the open collection; nil if it is not open.
	Collection *collection.Collection
	// Reopens counts the successful re-opens since the registry opened;
	// Attempts the attempts since the collection last failed (0 once it
	// has stayed healthy through its backoff).
	Reopens, Attempts int
	// NextRetry is when a failed collection is next re-opened.
	NextRetry time.Time
}

// Status describes the collection called name; the errors are Get's, but
// a collection that is not open has a Status (StateFailed).
func (r *Registry) Status(name string) (Status, error) {
	e, err := r.visible(name)
	if err != nil {
		return Status{}, err
	}
	return e.status(), nil
}

// List describes every collection, in name order.
func (r *Registry) List() []Status {
	var out []Status
	for _, name := range r.Names() {
		if st, err := r.Status(name); err == nil {
			out = append(out, st)
		}
	}
	return out
}

func (e *entry) status() Status {
	st := Status{Name: e.name, State: StateReady, Collection: e.c.Load()}
	e.mu.Lock()
	st.Reopens, st.Attempts = e.reopens, e.attempts
	next := e.nextRetry
	e.mu.Unlock()
	if st.Collection == nil {
		st.State, st.Error = StateFailed, "being re-opened"
		if p := e.why.Load(); p != nil {
			st.Error = (*p).Error()
		}
	} else if failed := st.Collection.Info().Failed; failed != "" {
		st.State, st.Error = StateFailed, failed
	}
	if st.State == StateFailed {
		st.NextRetry = next
	}
	return st
}

// Create creates and opens a collection. The error matches ErrBadName,
// collection.ErrExists if the name is taken (by a collection, a failed
// one, or a directory that is not a collection), or the engine's error
// for bad options; a Create that fails leaves nothing on disk.
func (r *Registry) Create(name string, opts collection.Options) (*collection.Collection, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if e := r.entries[name]; e != nil {
		hidden := e.hidden
		r.mu.Unlock()
		if hidden {
			return nil, fmt.Errorf("%w: %q is being created or dropped", collection.ErrExists, name)
		}
		return nil, fmt.Errorf("%w: %q", collection.ErrExists, name)
	}
	if _, err := r.fs.Stat(r.path(name)); !errors.Is(err, fs.ErrNotExist) {
		r.mu.Unlock()
		if err == nil {
			return nil, fmt.Errorf("%w: %s exists and is not a collection; move it away to use the name",
				collection.ErrExists, r.path(name))
		}
		return nil, fmt.Errorf("registry: create %q: %w", name, err)
	}
	e := &entry{name: name, hidden: true} // takes the name
	r.entries[name] = e
	r.mu.Unlock()

	c, err := r.build(name, opts)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		delete(r.entries, name)
		return nil, err
	}
	if r.closed { // Close ran meanwhile and could not see it
		c.Close()
		return nil, ErrClosed
	}
	e.c.Store(c)
	e.hidden = false
	return c, nil
}

// build makes the collection under a temporary name and renames it into
// place: no <name> directory exists until the whole collection does.
func (r *Registry) build(name string, opts collection.Options) (*collection.Collection, error) {
	tmp := filepath.Join(r.dir, creatingPrefix+name+"-"+randomHex())
	c, err := collection.Create(tmp, opts, r.tuningFor(name))
	if err != nil {
		r.removeQuietly(tmp)
		return nil, err
	}
	// Closed to be renamed: an open collection keeps its directory's path.
	// It is empty, so closing writes nothing.
	if err := c.Close(); err != nil {
		r.removeQuietly(tmp)
		return nil, fmt.Errorf("registry: create %q: %w", name, err)
	}
	dir := r.path(name)
	if err := r.fs.Rename(tmp, dir); err != nil {
		r.removeQuietly(tmp)
		return nil, fmt.Errorf("registry: create %q: %w", name, err)
	}
	if err := r.fs.SyncDir(r.dir); err != nil {
		// Whether the rename survives a crash is unknown: take it back,
		// so that the answer (a failure) stays true.
		r.discard(name)
		return nil, fmt.Errorf("registry: create %q: %w", name, err)
	}
	c, err = collection.Open(dir, r.tuningFor(name))
	if err != nil {
		r.discard(name)
		return nil, fmt.Errorf("registry: create %q: %w", name, err)
	}
	return c, nil
}

// removeQuietly removes a directory of an unfinished create; if it cannot,
// the next Open does.
func (r *Registry) removeQuietly(path string) {
	if err := r.fs.RemoveAll(path); err != nil {
		r.log.Warn("leftover directory not removed; the next start-up removes it", "dir", path, "error", err)
	}
}

// discard drops name's directory after a create that failed past its
// rename; the collection was never handed out.
func (r *Registry) discard(name string) {
	if err := r.remove(name); err != nil {
		r.log.Warn("failed create not undone", "name", name, "error", err)
	}
}

// Drop closes and deletes a collection, open or failed. Requests that
// still hold it fail with collection.ErrClosed. Once Drop returns nil the
// drop survives a crash and the name can be created again.
func (r *Registry) Drop(name string) error {
	r.mu.Lock()
	e := r.entries[name]
	switch {
	case r.closed:
		r.mu.Unlock()
		return ErrClosed
	case e == nil || e.hidden:
		r.mu.Unlock()
		if err := CheckName(name); err != nil {
			return err
		}
		return fmt.Errorf("%w: %q", ErrUnknownCollection, name)
	}
	e.hidden = true
	r.mu.Unlock()

	e.op.Lock()
	defer e.op.Unlock()
	if c := e.c.Swap(nil); c != nil {
		// Drop needs the lock released, and closing is how it is released;
		// without a final checkpoint, since the files go next (and if they
		// stay, the log still holds every write). Its error does not
		// matter.
		_ = c.CloseForDrop()
	}
	if err := r.remove(name); err != nil {
		// Still there: serve it again (or retry it, if it will not open).
		r.reopenLocked(e, r.opts.Now())
		r.mu.Lock()
		e.hidden = false
		r.mu.Unlock()
		return err
	}
	if r.opts.Forget != nil {
		r.opts.Forget(name)
	}
	r.mu.Lock()
	delete(r.entries, name)
	r.mu.Unlock()
	return nil
}

// remove takes name's directory away: a rename to a .dropped- name under
// the collection's lock, made durable, then the removal of the files.
func (r *Registry) remove(name string) error {
	dir := r.path(name)
	lock, err := collection.LockDir(r.fs, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // already gone
		}
		return fmt.Errorf("registry: drop %q: %w", name, err)
	}
	tomb := filepath.Join(r.dir, droppedPrefix+name+"-"+randomHex())
	err = r.fs.Rename(dir, tomb)
	if err == nil {
		if err = r.fs.SyncDir(r.dir); err != nil {
			// Not known to be durable: put it back, and say it failed.
			if rerr := r.fs.Rename(tomb, dir); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}
	lock.Close()
	if err != nil {
		return fmt.Errorf("registry: drop %q: %w", name, err)
	}
	r.removeQuietly(tomb)
	return nil
}

// Reopen closes the collection called name, open or not, and opens it
// again: it recovers from its log, which a collection that failed while
// open needs. The error is Get's, or ErrUnavailable with why it will not
// open (it is then retried by itself).
func (r *Registry) Reopen(name string) (*collection.Collection, error) {
	e, err := r.visible(name)
	if err != nil {
		return nil, err
	}
	e.op.Lock()
	defer e.op.Unlock()
	r.mu.RLock()
	gone := r.closed || e.hidden
	r.mu.RUnlock()
	if gone { // dropped or closed while this waited
		return nil, fmt.Errorf("%w: %q", ErrUnknownCollection, name)
	}
	return r.reopenLocked(e, r.opts.Now())
}

// reopenLocked re-opens e; the caller holds e.op.
func (r *Registry) reopenLocked(e *entry, now time.Time) (*collection.Collection, error) {
	e.mu.Lock()
	e.attempts++
	e.nextRetry = now.Add(r.backoff(e.attempts))
	e.mu.Unlock()
	if old := e.c.Load(); old != nil {
		if failed := old.Info().Failed; failed != "" {
			why := errors.New(failed)
			e.why.Store(&why)
		} else {
			e.why.Store(nil)
		}
		e.c.Store(nil)
		if err := old.Close(); err != nil {
			r.log.Debug("closing a collection to re-open it", "name", e.name, "error", err)
		}
	}
	c, err := collection.Open(r.path(e.name), r.tuningFor(e.name))
	if err != nil {
		e.why.Store(&err)
		r.log.Error("collection did not re-open; retrying later", "name", e.name, "error", err,
			"next_retry", e.nextRetry)
		return nil, e.unavailable()
	}
	e.why.Store(nil)
	e.mu.Lock()
	e.reopens++
	e.mu.Unlock()
	e.c.Store(c)
	r.log.Info("collection re-opened", "name", e.name)
	return c, nil
}

// RetryDue re-opens every failed collection whose backoff has passed at
// now, and forgets the failures of those that stayed healthy through
// theirs. It is what each tick does.
func (r *Registry) RetryDue(now time.Time) {
	r.mu.RLock()
	entries := make([]*entry, 0, len(r.entries))
	for _, e := range r.entries {
		entries = append(entries, e)
	}
	r.mu.RUnlock()
	for _, e := range entries {
		e.op.Lock()
		r.mu.RLock()
		gone := r.closed || e.hidden
		r.mu.RUnlock()
		if !gone {
			r.retryLocked(e, now)
		}
		e.op.Unlock()
	}
}

func (r *Registry) retryLocked(e *entry, now time.Time) {
	c := e.c.Load()
	e.mu.Lock()
	due := !now.Before(e.nextRetry)
	if c != nil && c.Info().Failed == "" {
		if e.attempts > 0 && due {
			e.attempts = 0
		}
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	if !due {
		return
	}
	if c != nil {
		// It still serves reads: close it only once the disk takes writes
		// again, or the re-open would fail and take the reads away too.
		if err := r.probe(); err != nil {
			e.mu.Lock()
			e.attempts++
			e.nextRetry = now.Add(r.backoff(e.attempts))
			e.mu.Unlock()
			r.log.Warn("collection failed, and the data dir still refuses writes; serving its reads",
				"name", e.name, "error", c.Info().Failed, "probe", err, "next_retry", e.nextRetry)
			return
		}
		r.log.Warn("collection failed; re-opening it", "name", e.name, "error", c.Info().Failed)
	}
	r.reopenLocked(e, now)
}

// probe checks that the data dir takes writes: it writes, fsyncs and
// removes a small file. Open removes one a crash left.
func (r *Registry) probe() error {
	path := filepath.Join(r.dir, probePrefix+randomHex())
	f, err := r.fs.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(make([]byte, probeBytes))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := r.fs.Remove(path); err == nil {
		err = rerr
	}
	return err
}

// Each calls fn for every open collection, in name order.
func (r *Registry) Each(fn func(name string, c *collection.Collection)) {
	for _, name := range r.Names() {
		r.mu.RLock()
		e := r.entries[name]
		r.mu.RUnlock()
		if e == nil {
			continue
		}
		if c := e.c.Load(); c != nil {
			fn(name, c)
		}
	}
}

// Close stops the retries and closes every collection (each checkpoints
// if its log holds anything new); it returns the first error. Later calls
// fail with ErrClosed.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	entries := make([]*entry, 0, len(r.entries))
	for _, e := range r.entries {
		entries = append(entries, e)
	}
	r.mu.Unlock()
	close(r.done)
	r.retries.Wait()
	slices.SortFunc(entries, func(a, b *entry) int { return strings.Compare(a.name, b.name) })
	var first error
	for _, e := range entries {
		e.op.Lock()
		if c := e.c.Swap(nil); c != nil {
			if err := c.Close(); err != nil && first == nil {
				first = fmt.Errorf("registry: close collection %q: %w", e.name, err)
			}
		}
		e.op.Unlock()
	}
	return first
}

func randomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
