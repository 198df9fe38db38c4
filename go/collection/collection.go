package collection

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/collection/wal"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// Names inside a collection's directory; see package snapshot for the layout.
const (
	lockName      = "LOCK"
	walDir        = "wal"
	snapshotsDir  = "snapshots"
	indexFileName = "index.hnsw"
	metaFileName  = "meta.idx"
)

// Collection is a durable set of (id, vector, metadata document) entries.
// All methods are safe for concurrent use. Writes are serialised through
// the log in sequence order; queries never wait for them.
type Collection struct {
	dir    string
	fs     vfs.FS
	opts   Options
	tuning Tuning
	lock   io.Closer

	// fields is the vector schema with each field's index (fields.go),
	// replaced whole when a field is added or removed.
	fields atomic.Pointer[fieldSet]
	meta   *meta.Index
	ids    *idTable     // string ids and their keys (ids.go)
	expiry *expiryTable // expiry times of expiring points (expiry.go)
	text   textIndexes  // full-text indexes over metadata fields (text.go)

	// hooks are set by tests before they write (zero: none).
	hooks testHooks

	// The write pipeline: callers queue requests, one committer goroutine
	// logs them in groups and applies them in sequence order.
	requests chan *request
	logged   chan []*request // groups on their way from commitLoop to applyLoop
	// handedOff counts the groups sent on logged and not yet applied; the
	// logger applies a small group itself only when it is 0.
	handedOff atomic.Int64
	stop      chan struct{}
	wg        sync.WaitGroup

	walMu sync.Mutex // serialises calls on log
	log   *wal.Writer

	applyMu sync.Mutex    // held while a group is applied; a checkpoint holds it to freeze
	applied atomic.Uint64 // last sequence number applied in memory
	failure atomic.Pointer[error]
	verify  verifyState // the CRCs Open deferred (verify.go)
	// logUnchecked: Open left log segments the snapshot covers unread
	// (wal.ReplayOptions.SkipCovered); the verifier checks them.
	logUnchecked bool

	closeMu sync.RWMutex // writers hold it shared; Close exclusively
	closed  bool
	shut    atomic.Bool // closed, for readers that take no lock (alive)

	// The builder (build.go): building is set while its goroutine runs.
	buildKick chan struct{}
	buildStop chan struct{}
	buildWG   sync.WaitGroup
	building  atomic.Bool

	checkpointMu   sync.Mutex // one checkpoint at a time
	checkpointKick chan struct{}
	// lookNow asks the checkpoint loop for its once-a-second look at once;
	// it closes the channel it receives when the look (and the checkpoint
	// after a vacuum) is done. Tests drive the loop with it instead of
	// waiting for the ticker (testing_test.go, startLook).
	lookNow chan chan struct{}
	// reapNow asks the reaper for a look at once, as lookNow does the
	// checkpoint loop (reaper.go).
	reapNow        chan chan struct{}
	lastCheckpoint atomic.Uint64 // sequence number of the live snapshot
	// liveSegs and prevSegs are the segment files the live and the
	// previous snapshot name (checkpointMu; Open sets them first).
	liveSegs, prevSegs []string
	// changed lists the keys whose document, string id or expiry the
	// applier changed since the last checkpoint froze its state
	// (applyMu); runs are the live snapshot's state runs, and stateWhole
	// says it holds its state in the files of before runs (a snapshot of
	// format 1-4), which the next checkpoint writes whole (state.go).
	changed       []uint64
	runs          []snapshot.StateFile
	stateWhole    bool
	checkpointAt  atomic.Int64 // unix nanoseconds of the last checkpoint, or 0
	walAtSnapshot atomic.Int64 // log bytes when the last checkpoint started
	snapshotBytes atomic.Int64 // size of the live snapshot's files
	// lookSeq is the applied sequence number at the checkpoint loop's
	// previous look (only that loop uses it); merging is set while a
	// merge builds (Info().Merging).
	lookSeq uint64
	// lookCheckpoints is the checkpoint count at that look, the loop's
	// own checkpoints included (a checkpoint by another caller since
	// means a client waiting for it, not idleness).
	lookCheckpoints int64
	// merged says the checkpoint loop's last look merged segments, which
	// the checkpoint after it persists (checkpoint.go). Only that loop
	// touches it.
	merged  bool
	merging atomic.Bool

	stats    Stats
	recovery Recovery
}

// Recovery says what Open found.
type Recovery struct {
	SnapshotSeq uint64 // the snapshot loaded
	Replayed    int    // log records applied on top of it
	TornFile    string // a torn tail cut off the log, if any
	TornOffset  int64
	TornBytes   int64
	TornReason  string
	// What Repair did (see wal.ReplayInfo): Corruption is the error Open
	// would have failed with ("" if nothing was repaired), at
	// DroppedOffset of DroppedFile; Lost are the sequence numbers the
	// damage took, Dropped how many of them the closed ranges hold;
	// Salvaged counts the records recovered from behind the damage;
	// Broken lists the copies of the damaged segments.
	Dropped       int
	DroppedFile   string
	DroppedOffset int64
	Corruption    string
	Lost          []wal.SeqRange
	Salvaged      int
	Broken        []string
	// Fallback is set if the snapshot CURRENT named (or CURRENT) was
	// damaged and an older one was loaded (fallback.go).
	Fallback *Fallback
	Duration time.Duration
}

// Stats counts what the write pipeline did since Open.
type Stats struct {
	Groups  atomic.Int64 // log appends (each one group of requests)
	Records atomic.Int64 // requests logged
	Syncs   atomic.Int64 // fsyncs of the log
	// SyncNanos and CheckpointNanos add up time spent, for averages.
	SyncNanos       atomic.Int64
	Checkpoints     atomic.Int64
	CheckpointNanos atomic.Int64
	Vacuums         atomic.Int64 // index compactions by the background checkpoint
	VacuumNanos     atomic.Int64
	Renumbers       atomic.Int64 // graph renumberings for locality (renumber)
}

// Exists reports whether dir holds a collection (a CURRENT file).
func Exists(fsys vfs.FS, dir string) bool {
	if fsys == nil {
		fsys = vfs.Default
	}
	_, err := fsys.Stat(filepath.Join(dir, snapshot.CurrentName))
	return err == nil
}

// IsLeftover reports whether dir, which holds no collection (no CURRENT),
// holds nothing but what Create writes before CURRENT and what Drop leaves
// after removing it (LOCK, the log, snapshot and segment directories,
// CURRENT's temporary file): the remains of a create or a drop that did not finish,
// which hold no acknowledged write and can be removed.
func IsLeftover(fsys vfs.FS, dir string) bool {
	if fsys == nil {
		fsys = vfs.Default
	}
	if Exists(fsys, dir) {
		return false
	}
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, name := range names {
		switch name {
		case lockName, walDir, snapshotsDir, snapshot.SegmentsDir, snapshot.CurrentName + ".tmp":
		default:
			return false
		}
	}
	return true
}

// Create makes a new collection in dir (created if missing). It fails with
// ErrExists if dir already holds one; leftovers of a Create that crashed
// before writing CURRENT are cleared.
func Create(dir string, opts Options, tuning Tuning) (*Collection, error) {
	tuning.setDefaults()
	// The fields are made before anything touches the disk: invalid
	// options must not leave a directory behind.
	fields, err := opts.newFields()
	if err != nil {
		return nil, err
	}
	if !tuning.HasFsync {
		tuning.Fsync = opts.Fsync // as Open does: the stored policy unless overridden
	}
	fsys := tuning.FS
	if Exists(fsys, dir) { // checked again under the lock
		return nil, fmt.Errorf("%w: %s already holds a collection", ErrExists, dir)
	}
	if err := vfs.MkdirAllDurable(fsys, dir); err != nil {
		return nil, fmt.Errorf("collection: create %s: %w", dir, err)
	}
	lock, err := takeLock(fsys, dir)
	if err != nil {
		return nil, err
	}
	c, err := create(dir, opts, tuning, lock, fields)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return c, nil
}

func create(dir string, opts Options, tuning Tuning, lock io.Closer, fields *fieldSet) (*Collection, error) {
	fsys := tuning.FS
	if Exists(fsys, dir) {
		return nil, fmt.Errorf("%w: %s already holds a collection", ErrExists, dir)
	}
	for _, name := range []string{walDir, snapshotsDir, snapshot.SegmentsDir} {
		if err := fsys.RemoveAll(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("collection: create %s: %w", dir, err)
		}
	}
	c := newCollection(dir, opts, tuning, lock, fields, meta.NewIndex(), newIDTable(), newExpiryTable())
	if err := c.initText(opts.TextFields, opts.TextAnalyzer); err != nil {
		return nil, err
	}
	// Snapshot 0 is the empty collection, so CURRENT always names a
	// snapshot and Open has one code path.
	set, frozen := fenceFields(c.fields.Load())
	err := c.freezeFields(0, frozen, c.builderThreads())
	if err != nil {
		return nil, fmt.Errorf("collection: %w", err)
	}
	// The log (and its HEAD) exists before the snapshot that says it does.
	if err := c.openLog(1); err != nil {
		return nil, err
	}
	_, c.liveSegs, _, err = c.writeSnapshot(0, set, frozen, freezeSparse(set), &pendingState{})
	if err == nil {
		err = snapshot.WriteCurrent(fsys, dir, 0)
	}
	if err != nil {
		c.log.Close()
		return nil, fmt.Errorf("collection: create %s: %w", dir, err)
	}
	c.startLoops()
	return c, nil
}

// Open opens the collection in dir and recovers it: it loads the snapshot
// CURRENT names and replays the log records after it. A torn tail of the
// log is cut off (see Info); a corrupt record followed by valid ones fails
// with ErrCorrupt naming the file and offset, unless tuning.Repair.
func Open(dir string, tuning Tuning) (*Collection, error) {
	tuning.setDefaults()
	fsys := tuning.FS
	if !Exists(fsys, dir) {
		if _, err := fsys.Stat(dir); err != nil {
			return nil, fmt.Errorf("collection: no collection at %s: %w", dir, err)
		}
		return nil, fmt.Errorf("collection: %s is not a collection (no %s): %w", dir, snapshot.CurrentName, fs.ErrNotExist)
	}
	lock, err := takeLock(fsys, dir)
	if err != nil {
		return nil, err
	}
	c, err := open(dir, tuning, lock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	// Loading read the index files' sections, the log tail and the state
	// runs through buffers that are garbage now; without this the Go
	// runtime keeps their pages resident for minutes (NOTES: 1 GiB after
	// 3 s idle), about a third of what a field of mmap placement keeps
	// (bench_collection_memory.py).
	debug.FreeOSMemory()
	return c, nil
}

func open(dir string, tuning Tuning, lock io.Closer) (*Collection, error) {
	began := time.Now()
	fsys := tuning.FS
	snap, fallback, err := chooseSnapshot(fsys, dir, !tuning.VerifyOnOpen)
	if err != nil {
		return nil, fmt.Errorf("collection: open %s: %w", dir, err)
	}
	seq, manifest, fields, docs, stored := snap.seq, snap.manifest, snap.fields, snap.docs, snap.stored
	opts, err := optionsFromSnapshot(manifest)
	if err != nil {
		closeFields(fields.fields)
		return nil, err
	}
	if !tuning.HasFsync {
		tuning.Fsync = opts.Fsync
	}
	c := newCollection(dir, opts, tuning, lock, fields, docs, snap.ids, snap.expiry)
	c.runs, c.stateWhole = snap.runs, manifest.Format < 5
	if err := c.rebuildText(manifest, stored); err != nil {
		return nil, fmt.Errorf("collection: open %s: %w", dir, err)
	}
	for _, f := range manifest.Files {
		c.snapshotBytes.Add(f.Size)
	}
	for _, v := range manifest.Vectors {
		for _, s := range v.Segments {
			c.snapshotBytes.Add(s.Size)
		}
	}
	for _, r := range manifest.State {
		c.snapshotBytes.Add(r.Size)
	}
	c.lastCheckpoint.Store(seq)
	c.applied.Store(seq)
	if err := c.replay(seq, manifest.WALHead); err != nil {
		return nil, err
	}
	c.recovery.Fallback = fallback
	prev, hasPrev := previousSnapshot(fsys, dir, seq)
	c.liveSegs = segmentsOf(manifest)
	if hasPrev {
		if m, err := snapshot.ReadManifest(fsys, snapshotPath(dir, prev)); err == nil {
			c.prevSegs = segmentsOf(m)
		}
	}
	if err := c.removeStale(seq, prev, hasPrev); err != nil {
		return nil, err
	}
	c.recovery.Duration = time.Since(began)
	if err := c.openLog(c.applied.Load() + 1); err != nil {
		return nil, err
	}
	if c.recovery.Corruption != "" {
		// A repair cut the log at the damage: the records it salvaged
		// after it are in memory only, and the log may skip from the cut
		// to the new segment. A snapshot of what was recovered, and the
		// removal of every older segment, make that the durable state.
		err = c.checkpoint()
		if err == nil {
			// The log the previous snapshot needs is gone with the
			// damage: it cannot be fallen back on any more.
			c.walMu.Lock()
			err = c.log.RemoveThrough(c.lastCheckpoint.Load())
			c.walMu.Unlock()
		}
		if err == nil {
			err = c.removeStale(c.lastCheckpoint.Load(), 0, false)
		}
		if err != nil {
			c.log.Close()
			return nil, fmt.Errorf("collection: open %s: checkpoint after repair: %w", dir, err)
		}
	}
	c.startLoops()
	return c, nil
}

// replay applies the log records after the snapshot, in groups, so that a
// long tail of single upserts is inserted in parallel batches.
func (c *Collection) replay(after uint64, walHead bool) error {
	const groupSize = 4096
	// The upserts' vectors of a group are decoded into one arena, reused
	// for the next group once this one is applied (the tail and the
	// fields copy what they keep): a 10k-record tail no longer allocates
	// a slice per record. A group's floats beyond the arena get their
	// own slices (decodeRecordIn).
	const arenaFloats = 1 << 21 // 8 MiB: 4,096 single rows of 512-d
	var arena []float32
	pending := make([]pendingWrite, 0, groupSize)
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := c.apply(pending)
		clear(pending) // drop the records' references before the arena is reused
		pending, arena = pending[:0], arena[:0]
		return err
	}
	next := after + 1
	replayed := 0
	info, err := wal.Replay(c.fs, filepath.Join(c.dir, walDir), after,
		// The segments before the snapshot are kept for a fallback on the
		// previous one; the verifier checks them (verify.go), unless
		// VerifyOnOpen or Repair asks for every record now.
		wal.ReplayOptions{Repair: c.tuning.Repair, RequireHead: walHead, SkipCovered: c.skipCoveredLog()},
		func(seq uint64, payload []byte) error {
			// A repair skips exactly the sequence numbers it reports lost.
			if seq < next || (seq > next && !c.tuning.Repair) {
				return fmt.Errorf("%w: log record %d follows snapshot %d: records %d..%d are missing",
					ErrCorrupt, seq, after, next, seq-1)
			}
			next = seq + 1
			replayed++
			if arena == nil {
				arena = make([]float32, 0, arenaFloats)
			}
			rec, err := decodeRecordIn(payload, &arena)
			if err != nil {
				return fmt.Errorf("log record %d: %w", seq, err)
			}
			docs, err := parseDocs(rec.docs)
			if err != nil {
				return fmt.Errorf("%w: log record %d: %v", ErrCorrupt, seq, err)
			}
			pending = append(pending, pendingWrite{rec: rec, docs: docs, seq: seq})
			if len(pending) >= groupSize {
				return flush()
			}
			return nil
		})
	if err == nil {
		err = flush()
	}
	if errors.Is(err, wal.ErrCorrupt) || errors.Is(err, wal.ErrVersion) {
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err != nil {
		return fmt.Errorf("collection: open %s: %w", c.dir, err)
	}
	c.logUnchecked = info.Skipped > 0
	c.recovery = Recovery{SnapshotSeq: after, Replayed: replayed,
		TornFile: info.TornFile, TornOffset: info.TornOffset, TornBytes: info.TornBytes, TornReason: info.TornReason,
		Dropped: info.Dropped, DroppedFile: info.DroppedFile, DroppedOffset: info.DroppedOffset,
		Lost: info.Lost, Salvaged: info.Salvaged, Broken: info.Broken}
	if info.Corruption != nil {
		c.recovery.Corruption = info.Corruption.Error()
	}
	return nil
}

func parseDocs(raw [][]byte) ([]meta.Document, error) {
	if raw == nil {
		return nil, nil
	}
	docs := make([]meta.Document, len(raw))
	for i, b := range raw {
		d, err := meta.ReadDocument(b)
		if err != nil {
			return nil, err
		}
		docs[i] = d
	}
	return docs, nil
}

func newCollection(dir string, opts Options, tuning Tuning, lock io.Closer, fields *fieldSet, docs *meta.Index, ids *idTable, expiry *expiryTable) *Collection {
	c := &Collection{dir: dir, fs: tuning.FS, opts: opts, tuning: tuning, lock: lock, meta: docs, ids: ids, expiry: expiry,
		requests: make(chan *request, 1024), logged: make(chan []*request, 1), stop: make(chan struct{}), checkpointKick: make(chan struct{}, 1),
		buildKick: make(chan struct{}, 1), buildStop: make(chan struct{}), lookNow: make(chan chan struct{}),
		reapNow: make(chan chan struct{})}
	c.fields.Store(fields)
	return c
}

// openLog opens the log for appending at nextSeq.
func (c *Collection) openLog(nextSeq uint64) error {
	log, err := wal.NewWriter(c.fs, filepath.Join(c.dir, walDir), nextSeq,
		wal.WriterOptions{SegmentBytes: c.tuning.SegmentBytes})
	if err != nil {
		return fmt.Errorf("collection: open %s: %w", c.dir, err)
	}
	c.log = log
	c.walAtSnapshot.Store(log.Bytes())
	return nil
}

// startLoops starts the goroutines of the write pipeline.
func (c *Collection) startLoops() {
	c.building.Store(true)
	c.buildWG.Add(1)
	go c.buildLoop()
	c.kickBuilder() // the tail replay left
	c.wg.Add(4)
	go c.commitLoop()
	go c.applyLoop()
	go c.checkpointLoop()
	go c.reapLoop()
	if c.tuning.Fsync == FsyncBatch {
		c.wg.Add(1)
		go c.syncLoop()
	}
	c.startVerifier()
}

// LockDir takes the lock an open collection holds on dir, failing with
// ErrLocked if this or another process has it open: whoever moves or
// removes a collection's directory holds it, so that no one has the
// collection open meanwhile. Close the Closer to release it.
func LockDir(fsys vfs.FS, dir string) (io.Closer, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	return takeLock(fsys, dir)
}

func takeLock(fsys vfs.FS, dir string) (io.Closer, error) {
	lock, err := fsys.Lock(filepath.Join(dir, lockName))
	if errors.Is(err, vfs.ErrLocked) {
		return nil, fmt.Errorf("%w: %s is open elsewhere (in this or another process)", ErrLocked, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("collection: lock %s: %w", dir, err)
	}
	return lock, nil
}

func snapshotPath(dir string, seq uint64) string {
	return filepath.Join(dir, snapshotsDir, fmt.Sprintf("%016x", seq))
}

func optionsFromManifest(m snapshot.Manifest) (Options, error) {
	mtr, err := metric.Parse(m.Metric)
	if err != nil {
		return Options{}, fmt.Errorf("%w: manifest metric %q", ErrCorrupt, m.Metric)
	}
	q := hnsw.QuantNone
	switch m.Quantization {
	case "none":
	case "sq8":
		q = hnsw.QuantSQ8
	default:
		return Options{}, fmt.Errorf("%w: manifest quantization %q", ErrCorrupt, m.Quantization)
	}
	f, err := ParseFsync(m.Fsync)
	if err != nil {
		return Options{}, fmt.Errorf("%w: manifest fsync %q", ErrCorrupt, m.Fsync)
	}
	// An SQ8 index of these formats keeps no float vectors: they predate
	// rescoring.
	return Options{Dim: m.Dim, Metric: mtr, M: m.M, EfConstruction: m.EfConstruction, Quantization: q,
		CodesOnly: q == hnsw.QuantSQ8, Fsync: f}, nil
}

// optionsFromSnapshot returns the options a collection was created with
// as far as its snapshot says: for a format 3 manifest, the schema as it
// is now in Vectors (and its field "", if any, in Dim, Metric, ...).
func optionsFromSnapshot(m snapshot.Manifest) (Options, error) {
	if m.Format < 3 {
		return optionsFromManifest(m)
	}
	f, err := ParseFsync(m.Fsync)
	if err != nil {
		return Options{}, fmt.Errorf("%w: manifest fsync %q", ErrCorrupt, m.Fsync)
	}
	schema, err := schemaFromManifest(m)
	if err != nil {
		return Options{}, err
	}
	opts := Options{Fsync: f, Vectors: schema}
	for _, sp := range m.Sparse {
		mod, err := sparse.ParseModifier(sp.Modifier)
		if err != nil {
			return Options{}, fmt.Errorf("%w: sparse field %q: modifier %q", ErrCorrupt, sp.Name, sp.Modifier)
		}
		opts.Sparse = append(opts.Sparse, SparseField{Name: sp.Name, Modifier: mod})
	}
	dense, err := opts.schemaOf()
	if err != nil {
		return Options{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if _, err := sparseSchemaOf(opts.Sparse, dense); err != nil {
		return Options{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return opts, nil
}

// Dir returns the collection's directory.
func (c *Collection) Dir() string { return c.dir }

// Options returns the parameters the collection was created with, its
// vector fields as they are now: Vectors lists them (nil for a collection
// of the one dense field "" made the old way), and Dim, Metric, M,
// EfConstruction and Quantization are the field ""'s (zero without one).
func (c *Collection) Options() Options {
	opts := c.opts
	set := c.fields.Load()
	opts.Vectors, opts.Sparse = nil, nil
	if !set.legacy() {
		opts.Vectors = set.schema()
	}
	if len(set.sparse) > 0 {
		opts.Sparse = set.sparseSchema()
	}
	opts.Dim, opts.Metric, opts.M, opts.EfConstruction, opts.Quantization, opts.Memory = 0, 0, 0, 0, 0, 0
	opts.CodesOnly = false
	if d := set.def; d != nil {
		opts.Dim, opts.Metric, opts.M, opts.EfConstruction, opts.Quantization = d.Dim, d.Metric, d.M, d.EfConstruction, d.Quantization
		if opts.Vectors == nil {
			opts.Memory, opts.CodesOnly = d.Memory, d.CodesOnly
		}
	}
	return opts
}

// Close finishes queued writes, checkpoints if the log holds anything the
// snapshot lacks, syncs and closes the log, and releases the lock. Calls
// after Close fail with ErrClosed; Close itself may be called again.
func (c *Collection) Close() error { return c.close(true) }

// CloseForDrop closes the collection as Close does but skips the final
// checkpoint: for a collection whose files are deleted next, which would
// otherwise write a whole snapshot only to remove it. Nothing acknowledged
// is lost if the files stay after all: the log still holds every write.
func (c *Collection) CloseForDrop() error { return c.close(false) }

func (c *Collection) close(checkpoint bool) error {
	c.closeMu.Lock()
	if c.closed {
		c.closeMu.Unlock()
		return nil
	}
	c.closed = true
	c.shut.Store(true)
	c.closeMu.Unlock()
	close(c.stop)
	c.wg.Wait() // the committer drains queued requests first
	c.stopBuilder()
	var err error
	if checkpoint && c.failure.Load() == nil && c.applied.Load() != c.lastCheckpoint.Load() {
		err = c.checkpoint()
	}
	c.walMu.Lock()
	if cerr := c.log.Close(); err == nil && c.failure.Load() == nil {
		err = cerr
	}
	c.walMu.Unlock()
	if cerr := c.lock.Close(); err == nil {
		err = cerr
	}
	// The segments' mappings (every field's, since Open maps the vectors
	// of ram placement too) go once the reads still in flight let go.
	for _, f := range c.fields.Load().fields {
		f.index.Release()
	}
	return err
}

// alive fails with ErrClosed once Close has begun: every method that reads
// or writes entries starts with it. A read already past it when Close
// begins finishes safely (Close frees no memory a read could touch).
func (c *Collection) alive() error {
	if c.shut.Load() {
		return ErrClosed
	}
	// A segment that failed its deferred CRC (verify.go) serves nothing.
	if p := c.verify.damage.Load(); p != nil {
		return *p
	}
	return nil
}

// Drop deletes the collection in dir. It fails with ErrLocked if the
// collection is open.
func Drop(fsys vfs.FS, dir string) error {
	if fsys == nil {
		fsys = vfs.Default
	}
	if !Exists(fsys, dir) {
		return fmt.Errorf("collection: no collection at %s: %w", dir, fs.ErrNotExist)
	}
	lock, err := takeLock(fsys, dir)
	if err != nil {
		return err
	}
	// CURRENT goes first: a crash during the removal leaves a directory
	// that is no longer a collection rather than a damaged one.
	err = fsys.Remove(filepath.Join(dir, snapshot.CurrentName))
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	lock.Close()
	if err == nil {
		err = fsys.RemoveAll(dir)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("collection: drop %s: %w", dir, err)
	}
	return nil
}
