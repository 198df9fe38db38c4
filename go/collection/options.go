package collection

import (
	"fmt"
	"time"

	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// Fsync is when acknowledged writes reach stable storage.
type Fsync uint8

// The values are part of the C ABI: do not change them.
const (
	// FsyncAlways fsyncs the log before a write returns: an acknowledged
	// write survives a crash or a power loss. Concurrent writers share one
	// fsync (group commit).
	FsyncAlways Fsync = 0
	// FsyncBatch fsyncs the log in the background every BatchInterval: a
	// power loss can lose the writes of the last interval; a crash of the
	// process alone loses nothing (the data is in the kernel's page cache).
	FsyncBatch Fsync = 1
	// FsyncNever leaves the log to the kernel's writeback (about 30 s on
	// Linux) until a checkpoint or Close: a power loss can lose anything
	// since the last checkpoint; a process crash loses nothing.
	FsyncNever Fsync = 2
)

var fsyncNames = [...]string{"always", "batch", "never"}

func (f Fsync) String() string {
	if int(f) < len(fsyncNames) {
		return fsyncNames[f]
	}
	return fmt.Sprintf("Fsync(%d)", f)
}

// ParseFsync parses "always", "batch" or "never".
func ParseFsync(s string) (Fsync, error) {
	for i, name := range fsyncNames {
		if s == name {
			return Fsync(i), nil
		}
	}
	return 0, fmt.Errorf("%w: fsync must be \"always\", \"batch\" or \"never\", got %q", ErrInvalid, s)
}

// Options are fixed when a collection is created.
type Options struct {
	// Dim, Metric, M, EfConstruction and Quantization describe the one
	// unnamed vector field "" of a collection created without Vectors.
	// With Vectors, Dim must be 0 and Options() reports the field ""'s
	// parameters in them, if there is one.
	Dim            int
	Metric         metric.Metric
	M              int // default 16
	EfConstruction int // default 200
	Quantization   hnsw.Quantization
	// Memory is the field ""'s placement of float vectors (memory.go);
	// with Vectors each field has its own and this must be MemoryRAM.
	Memory Memory
	// CodesOnly is the field ""'s VectorField.CodesOnly (an SQ8 field
	// without float vectors or rescoring); with Vectors each field has
	// its own and this must be false.
	CodesOnly bool
	Seed      uint64
	Fsync     Fsync // the default policy, stored in every snapshot
	// TextFields are metadata fields (dotted paths) to keep full-text
	// indexes over, analyzed with TextAnalyzer ("" = "english"; see
	// package text). More can be added later with CreateTextIndex.
	TextFields   []string
	TextAnalyzer string
	// Vectors, when not nil, is the schema of vector fields (schema.go):
	// each named, with its own dimension, metric, graph and quantization,
	// dense or multivector. Fields can be added and removed later
	// (AddVectorField, RemoveVectorField).
	Vectors []VectorField
	// Sparse are the sparse vector fields (sparse_fields.go), their names
	// distinct from Vectors'. A collection may have sparse fields alone
	// (Dim 0, Vectors nil). More can be added later (AddSparseField) and
	// removed (RemoveVectorField).
	Sparse []SparseField
}

// Tuning are settings of one open collection; zero values pick defaults.
type Tuning struct {
	FS vfs.FS // default vfs.Default
	// Fsync overrides the stored policy when HasFsync is set.
	Fsync    Fsync
	HasFsync bool
	// BatchInterval is FsyncBatch's period; default 10 ms.
	BatchInterval time.Duration
	// CheckpointBytes starts a checkpoint in the background once the log
	// holds this many bytes since the last one; default 64 MiB, < 0 never.
	CheckpointBytes int64
	// SegmentBytes is the size at which the log starts a new segment;
	// default 64 MiB.
	SegmentBytes int64
	// Repair, on Open, salvages a damaged log instead of refusing to open:
	// it keeps .broken copies of the damaged segments, applies every valid
	// record behind the damage, reports the lost sequence numbers in
	// Info().Recovery and checkpoints (see the package doc).
	Repair bool
	// VerifyOnOpen checks every byte of the segment files before Open
	// returns, as before issue 24's constant-time reopen. By default Open
	// maps the segments (vectors, links, ids, codes) and checks their CRCs
	// after it has returned, in the background (verify.go, Info().Verification); a
	// damaged segment then fails the collection instead of failing Open,
	// which is what falling back on the previous snapshot needs: reopen
	// with VerifyOnOpen to get the fallback.
	VerifyOnOpen bool
	// VacuumRatio: the collection rewrites a graph segment (package
	// segment, "Merging"; writes and queries go on) and then checkpoints
	// when removed and overwritten vectors make up at least this fraction
	// of its nodes and number at least 1,000 (looked at every second and
	// before each background checkpoint), so an overwrite-heavy collection
	// neither grows without bound nor slows down searches that wade
	// through tombstones; the same looks merge small segments. Default 0.2
	// (Qdrant's deleted_threshold); < 0 never, and no merges either.
	VacuumRatio float64
	// Threads bounds the goroutines of index builds; 0 uses every core
	// (a vacuum, running beside requests, then uses half of them).
	Threads int
	// TailRows and TailBytes bound each vector field's mutable tail, the
	// acknowledged values not yet in its graph, which every query scans
	// exactly: once the builder is behind by this many rows or bytes, the
	// writes wait for it (see build.go). Defaults 8192 rows and 16 MiB,
	// about 0.25 ms of exact scan per query at 512 dimensions.
	TailRows  int
	TailBytes int64
	// Clock, if not nil, is the time expiring points are compared with
	// (expiry.go) instead of time.Now: a test hook, and a way for a door
	// to share one clock. It must be safe for concurrent use.
	Clock func() time.Time
	// ReapInterval is how often the reaper (reaper.go) looks for expired
	// points to delete; default 1 s, < 0 never (they stay invisible to
	// every read, and in memory and on disk, until deleted).
	ReapInterval time.Duration
	// ReapBatch bounds the expired points one look of the reaper deletes
	// (one log record); default 4096.
	ReapBatch int
	// HoldMerges, if not nil, holds back the checkpoint loop's own looks
	// (merges, vacuums, renumbering; see checkpoint.go) until it is
	// closed; the checkpoints the log calls for still run. A test hook:
	// the crash tests arm a kill point before an idle merge can start,
	// and the metamorphic test merges only where it looks itself.
	HoldMerges <-chan struct{}
	// Observer, if not nil, is told how long each fsync and checkpoint took
	// and how many writes each group commit carried (for metrics).
	Observer Observer
}

// Observer receives measurements of the write path. Its methods are called
// from the collection's own goroutines, once per fsync, group or
// checkpoint (never per row), and must not block.
type Observer interface {
	Fsync(d time.Duration)
	Group(writes int)
	Checkpoint(d time.Duration)
}

const (
	defaultBatchInterval   = 10 * time.Millisecond
	defaultCheckpointBytes = 64 << 20
	defaultVacuumRatio     = 0.2
	defaultTailRows        = 8192
	defaultTailBytes       = 16 << 20
	defaultReapInterval    = time.Second
	defaultReapBatch       = 4096
	// vacuumMinTombstones keeps small collections from rebuilding for a
	// handful of deletions (Qdrant's vacuum_min_vector_number).
	vacuumMinTombstones = 1000
	// vacuumCheckInterval is how often the checkpoint loop looks at the
	// tombstones between checkpoints.
	vacuumCheckInterval = time.Second
	// mergeFactor and maxSegments are the merge policy's fan-in (10
	// segments of one tier become one) and bound on a field's sealed
	// segments while writes come (segment.MergePolicy; the package doc,
	// "Merging", has the write amplification arithmetic).
	mergeFactor = 10
	maxSegments = 12
	// mergeBudgetShare bounds a merge of several segments to that share
	// of the field's live keys (mergeBudget): a merge holds its new graph
	// beside the segments it replaces until it lands, so this is what it
	// adds to the collection's memory (half: a merge peaks near 1.5x the
	// steady memory, not 2x as a merge of everything did). Fields whose
	// vectors and level-0 links take less than mergeBudgetMinBytes (about
	// 400k keys at 128-d, 120k at 512-d) merge down to one segment all
	// the same: below that a whole merge adds little memory, and each
	// extra segment costs every query another graph search
	// (TestSegmentQueryBench: 0.59x one graph's speed with 3 segments at
	// 100k).
	mergeBudgetShare    = 0.5
	mergeBudgetMinBytes = 256 << 20
	// renumberGrowth is how much the graph grows between renumberings:
	// each copies the whole graph, so the copies of a collection grown
	// from empty add up to 1/(1-1/1.5) = 3 times its final size.
	renumberGrowth = 1.5
)

func (t *Tuning) setDefaults() {
	if t.FS == nil {
		t.FS = vfs.Default
	}
	if t.BatchInterval <= 0 {
		t.BatchInterval = defaultBatchInterval
	}
	if t.CheckpointBytes == 0 {
		t.CheckpointBytes = defaultCheckpointBytes
	}
	if t.TailRows <= 0 {
		t.TailRows = defaultTailRows
	}
	if t.TailBytes <= 0 {
		t.TailBytes = defaultTailBytes
	}
	if t.VacuumRatio == 0 {
		t.VacuumRatio = defaultVacuumRatio
	}
	if t.ReapInterval == 0 {
		t.ReapInterval = defaultReapInterval
	}
	if t.ReapBatch <= 0 {
		t.ReapBatch = defaultReapBatch
	}
}

// newFields fills in defaults, checks the options and makes the
// collection's empty fields (hnsw.New checks the index parameters against
// package limits). Nothing has touched the disk yet.
func (o *Options) newFields() (*fieldSet, error) {
	if int(o.Fsync) >= len(fsyncNames) {
		return nil, fmt.Errorf("%w: unknown fsync policy %d", ErrInvalid, o.Fsync)
	}
	if len(o.TextFields) > MaxTextFields {
		return nil, fmt.Errorf("%w: %d text fields, more than the limit of %d", ErrInvalid, len(o.TextFields), MaxTextFields)
	}
	if _, err := text.ParseAnalyzer(o.TextAnalyzer); err != nil {
		return nil, fmt.Errorf("collection: %w", err)
	}
	for _, field := range o.TextFields {
		if _, err := checkTextSpec(field, o.TextAnalyzer); err != nil {
			return nil, err
		}
	}
	schema, err := o.schemaOf()
	if err != nil {
		return nil, err
	}
	sparseSchema, err := sparseSchemaOf(o.Sparse, schema)
	if err != nil {
		return nil, err
	}
	o.Sparse = sparseSchema
	fields := make([]*vectorField, len(schema))
	for i, spec := range schema {
		if fields[i], err = newField(spec, o.Seed); err != nil {
			return nil, err
		}
	}
	sp := make([]*sparseField, len(sparseSchema))
	for i, spec := range sparseSchema {
		if sp[i], err = newSparseField(spec); err != nil {
			return nil, err
		}
	}
	return newFieldSet(fields, sp), nil
}
