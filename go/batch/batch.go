// Package batch checks a batch of vectors and ids before an index changes
// anything, so that every engine rejects the same bad input with the same
// message and a rejected batch leaves the index exactly as it was.
//
// A batch is n row-major vectors of dim float32 each (len(vectors) == n*dim)
// and, optionally, one id per vector. Ids are uint64 on the wire but must fit
// in an int64, because search results carry them as int64 with -1 meaning
// "no result".
package batch

import (
	"fmt"
	"math"

	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/limits"
)

// ErrInvalid is wrapped by every error this package returns. Its kind is
// errkind.Invalid: doors classify errors with errkind.Of.
var ErrInvalid = errkind.New(errkind.Invalid, "invalid argument")

// MaxID is the largest id an index accepts (limits.MaxIntID). An index
// made for a collection (hnsw.Config.Keys) takes keys up to MaxKey.
const MaxID = limits.MaxIntID

// MaxKey is the largest internal key of a collection: any uint64 but
// 2^64-1, whose int64 bit pattern is -1, "no result" in search outputs.
const MaxKey = math.MaxUint64 - 1

// Rows returns how many dim-float rows vectors holds, or an error if
// dim is not positive or len(vectors) is not a multiple of it.
func Rows(vectors []float32, dim int, what string) (int, error) {
	if dim <= 0 {
		return 0, fmt.Errorf("%w: dim must be positive, got %d", ErrInvalid, dim)
	}
	if len(vectors)%dim != 0 {
		return 0, fmt.Errorf("%w: %s has %d floats, not a multiple of dim %d", ErrInvalid, what, len(vectors), dim)
	}
	return len(vectors) / dim, nil
}

// CheckFinite returns an error naming the first row and column that holds a
// NaN or an infinity. what names the argument in the message ("vectors",
// "queries").
func CheckFinite(vectors []float32, dim int, what string) error {
	for i, v := range vectors {
		// Exponent all ones means NaN or ±Inf; one mask test per float keeps
		// the check cheaper than the copy that follows it.
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return fmt.Errorf("%w: %s[%d][%d] is %v; vectors must be finite", ErrInvalid, what, i/dim, i%dim, v)
		}
	}
	return nil
}

// CheckIDs returns an error if an id exceeds MaxID or appears twice in ids.
func CheckIDs(ids []uint64) error { return CheckIDsUpTo(ids, MaxID) }

// CheckIDsUpTo is CheckIDs with largest the largest id allowed.
func CheckIDsUpTo(ids []uint64, largest uint64) error {
	for i, id := range ids {
		if id > largest {
			return fmt.Errorf("%w: ids[%d] = %d exceeds the largest id %d", ErrInvalid, i, id, largest)
		}
	}
	if len(ids) < 2 {
		return nil
	}
	seen := make(map[uint64]int, len(ids))
	for i, id := range ids {
		if j, dup := seen[id]; dup {
			return fmt.Errorf("%w: duplicate id %d in one batch (ids[%d] and ids[%d])", ErrInvalid, id, j, i)
		}
		seen[id] = i
	}
	return nil
}

// CheckAdd runs every check an insert needs: shape, finiteness, ids and the
// length of the caller's id output. It returns the number of rows.
func CheckAdd(vectors []float32, dim int, ids, outIDs []uint64) (int, error) {
	return CheckAddUpTo(vectors, dim, ids, outIDs, MaxID)
}

// CheckAddUpTo is CheckAdd with largest the largest id allowed.
func CheckAddUpTo(vectors []float32, dim int, ids, outIDs []uint64, largest uint64) (int, error) {
	n, err := Rows(vectors, dim, "vectors")
	if err != nil {
		return 0, err
	}
	if ids != nil && len(ids) != n {
		return 0, fmt.Errorf("%w: %d ids for %d vectors", ErrInvalid, len(ids), n)
	}
	if outIDs != nil && len(outIDs) != n {
		return 0, fmt.Errorf("%w: id output has room for %d ids, want %d", ErrInvalid, len(outIDs), n)
	}
	if err := CheckFinite(vectors, dim, "vectors"); err != nil {
		return 0, err
	}
	if err := CheckIDsUpTo(ids, largest); err != nil {
		return 0, err
	}
	return n, nil
}

// CheckSearch runs every check a search needs: shape, finiteness, k and the
// lengths of both outputs. It returns the number of queries.
func CheckSearch(queries []float32, dim, k int, outIDs []int64, outDists []float32) (int, error) {
	nq, err := Rows(queries, dim, "queries")
	if err != nil {
		return 0, err
	}
	if err := limits.CheckK(k); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if nq > 0 && k > math.MaxInt/nq {
		return 0, fmt.Errorf("%w: nq*k overflows (nq=%d, k=%d)", ErrInvalid, nq, k)
	}
	if len(outIDs) != nq*k || len(outDists) != nq*k {
		return 0, fmt.Errorf("%w: outputs hold %d ids and %d distances, want %d each", ErrInvalid, len(outIDs), len(outDists), nq*k)
	}
	if err := CheckFinite(queries, dim, "queries"); err != nil {
		return 0, err
	}
	return nq, nil
}
