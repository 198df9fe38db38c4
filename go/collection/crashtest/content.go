package crashtest

import (
	"fmt"
	"math"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/sparse"
)

// What an op writes is a function of (op id, entry id), so the journal
// records only ids and the checker recomputes the vectors and documents.

// IDsPerWorker is the size of each worker's id range: worker w owns ids
// [w·IDsPerWorker, (w+1)·IDsPerWorker), so the writes to one id come from
// one goroutine, one at a time, in journal order.
const IDsPerWorker = 48

// The journal and the model number entries with uint64s; the collection
// sees every third of them as a string id ("s-<n>"), so that every
// workload writes, overwrites, deletes and recovers both kinds of ids,
// often in one batch.

// ExternalID is the collection id of entry n.
func ExternalID(n uint64) collection.ID {
	if n%3 == 2 {
		return collection.StringID(fmt.Sprintf("s-%d", n))
	}
	return collection.IntID(n)
}

// ExternalIDs maps ExternalID over ns.
func ExternalIDs(ns []uint64) []collection.ID {
	out := make([]collection.ID, len(ns))
	for i, n := range ns {
		out[i] = ExternalID(n)
	}
	return out
}

// EntryOf is the entry number of a collection id, or an error for an id
// no workload writes (a string id that lost or changed its text, an
// integer where a string belongs).
func EntryOf(id collection.ID) (uint64, error) {
	var n uint64
	if id.IsString() {
		if _, err := fmt.Sscanf(id.Str(), "s-%d", &n); err != nil || ExternalID(n) != id {
			return 0, fmt.Errorf("%w: id %v is no workload's", ErrPhantom, id)
		}
		return n, nil
	}
	if n = id.Int(); ExternalID(n) != id {
		return 0, fmt.Errorf("%w: id %v is no workload's (entry %d is a string id)", ErrPhantom, id, n)
	}
	return n, nil
}

func mix(a, b uint64) uint64 {
	x := a*0x9e3779b97f4a7c15 ^ (b + 0x632be59bd9b4e019)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Vector is the vector op writes for id: dim values in [-1, 1).
func Vector(op, id uint64, dim int, out []float32) []float32 {
	for i := range dim {
		out = append(out, float32(mix(op, id*64+uint64(i))>>40)/float32(1<<23)-1)
	}
	return out
}

// ExtraCount is how many vectors of ExtraField an upsert of op gives id:
// 0 (none) for a third of the points, else 1 to 3. An UpdateVectors of the
// field writes max(1, ExtraCount) vectors.
func ExtraCount(op, id uint64) int {
	return int(mix(op^0xe47a, id) % 4)
}

// ExtraVectors appends the max(1, ExtraCount(op, id)) vectors of
// ExtraField that op writes for id.
func ExtraVectors(op, id uint64, out []float32) []float32 {
	return Vector(mix(op, 0xe47a), id, max(1, ExtraCount(op, id))*ExtraDim, out)
}

// SparseGiven reports whether an upsert of op gives id a value in
// SparseField (three points in four; the value may be the empty vector).
func SparseGiven(op, id uint64) bool { return mix(op^0x5a7e, id)%4 != 0 }

// SparseVector is the value of SparseField that op writes for id: 0 to 4
// coordinates, indices increasing (written in reverse, so the collection
// sorts them), values in [-1, 1).
func SparseVector(op, id uint64) sparse.Vector {
	n := int(mix(op^0x5a7f, id) % 5)
	v := sparse.Vector{Indices: make([]uint32, 0, n), Values: Vector(mix(op, 0x5a7f), id, n, make([]float32, 0, n))}
	index := uint32(mix(op, id^0x5a7f) % 40)
	for i := range n {
		index += 1 + uint32(mix(op, id*8+uint64(i))%7)
		v.Indices = append(v.Indices, index)
	}
	return v
}

// ExpiresAt is the expiry (Unix seconds) an upsert of op gives id: NaN
// (none) for three points in four, else either long past, so that the
// point is expired from the moment it is written (every read must treat
// the upsert as a delete, and the reaper deletes it in the background),
// or far in the future (the point must keep exactly this expiry).
func ExpiresAt(op, id uint64) float64 {
	h := mix(op^0x77e1, id)
	switch h % 8 {
	case 0:
		return 1e9 + float64(h>>40%1000) // 2001
	case 1:
		return 7e9 + float64(h>>40%1000) // 2191
	}
	return math.NaN()
}

// Expired reports whether an upsert of op writes id already expired.
func Expired(op, id uint64) bool { return ExpiresAt(op, id) < 2e9 }

// expiryNanos is the expiry the collection stores for ExpiresAt(op, id),
// Unix nanoseconds, 0 for none.
func expiryNanos(op, id uint64) int64 {
	at := ExpiresAt(op, id)
	if math.IsNaN(at) {
		return 0
	}
	return max(int64(at*1e9), 1)
}

// group is the g field of the document op writes for id, or -1 if the
// document is empty ({}); DeleteWhere ops select on it.
func group(op, id uint64, kind byte) int {
	h := mix(op^0x5bd1e995, id)
	if kind == KindUpsert && h%8 == 0 {
		return -1
	}
	return int(h>>8) % 100
}

// Document is the canonical JSON document op writes for id.
func Document(op, id uint64, worker int, kind byte) []byte {
	g := group(op, id, kind)
	if g < 0 {
		return []byte("{}")
	}
	return fmt.Appendf(nil, `{"w":%d,"g":%d,"op":%d,"k":"%c","tags":["t%d","x"]}`, worker, g, op, kind, g%5)
}

func parseDocument(b []byte) meta.Document {
	d, err := meta.ParseDocument(b)
	if err != nil {
		panic(fmt.Sprintf("crashtest: own document %s: %v", b, err))
	}
	return d
}

// canonicalDocument is Document as the collection returns it.
func canonicalDocument(op, id uint64, worker int, kind byte) string {
	return string(parseDocument(Document(op, id, worker, kind)).JSON())
}

func ownerOf(id uint64) int { return int(id / IDsPerWorker) }
