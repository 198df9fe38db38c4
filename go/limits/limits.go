// Package limits is the one list of bounds the engine puts on its
// parameters, and the checks that enforce them. Every bound is here with
// the reason for its value; the engine (packages hnsw, flat, collection,
// batch) checks every parameter that reaches a file or bounds work against
// it, and the doors (C ABI, REST, Qdrant, Python, Ray) check none of them:
// they pass the engine's message on. A door checks only what only it can
// see (a JSON type, a NumPy dtype, whether a Python int fits the C type it
// is passed as) and, for the server, its own deployment policy
// (server.Config.MaxK bounds the size of one HTTP answer).
//
// Every error returned here has kind errkind.Invalid and names the
// parameter, the range and the value given; callers wrap it with their
// package's invalid-argument sentinel ("hnsw: invalid argument: M must be
// in [2, 256], got 300").
package limits

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/strata-db/strata/go/errkind"
)

const (
	// MaxDim bounds the vector dimension. The index file stores dim as a
	// uint32, but the collection's manifest reader (package snapshot)
	// refuses a dim above 2^16, so a larger one could be created and never
	// opened again; 2^16 floats (256 KiB a row) also keeps every node
	// offset of the graph far inside int.
	MaxDim = 1 << 16
	// MinM and MaxM bound M, the neighbours per node above level 0 (level
	// 0 keeps 2·M). Below 2 the graph is a list; a node's level-0 record
	// is a fixed stride of 1+2·M uint32s, copied whole on every link
	// update, and the manifest reader refuses M above 256.
	MinM = 2
	MaxM = 256
	// MaxEfConstruction bounds the candidate list of an insert. The index
	// file (hnsw, "HNSW" header) stores it as a uint32 and the manifest
	// as a JSON integer, so a value of 2^32 or more was stored truncated
	// (2^32 as 0) and refused as corrupt on the next open. Each insert
	// holds a heap of this many candidates, 2^20 (16 MiB of heap per
	// inserting thread) is the most that is still a build parameter
	// rather than a mistake.
	MaxEfConstruction = 1 << 20
	// MaxK bounds the results asked of one query: the caller allocates
	// nq·k ids and distances, and the search keeps a heap of max(k, ef).
	MaxK = 1 << 20
	// MaxEf bounds a search's candidate list, allocated per query. It
	// equals MaxK because a search widens ef to k.
	MaxEf = 1 << 20
	// MaxScan bounds one page of a scan (ids returned by one call): a
	// collection holds at most 2^32 entries (the graph numbers its nodes
	// with uint32), so no page can be longer.
	MaxScan = math.MaxUint32
	// MaxBM25K1 bounds BM25's k1 (term-frequency saturation; b and a
	// fusion's alpha are fractions, [0, 1]): past 1000 the score is raw
	// term frequency and a larger value is a mistake. Checked by package
	// text, like the analyzer names, MaxTextFields and the query bounds
	// (text.MaxQueryBytes, text.MaxQueryTerms).
	MaxBM25K1 = 1000
	// MaxRRFK bounds the constant of reciprocal rank fusion.
	MaxRRFK = 1e6
	// MaxSparseNonZeros bounds the non-zeros of one sparse vector (a
	// stored point's or a query's). Each costs 8 bytes (a uint32 index and
	// a float32 value), so 2^15 makes a row at most 256 KiB, the size of a
	// dense row of MaxDim floats: a log record or snapshot row of a sparse
	// field is never larger than a dense one. Encoders stay far below it
	// (SPLADE keeps a few hundred, BM25 one per distinct term of a
	// document), and a query's non-zeros bound its posting lists, so the
	// bound is also one on the work of one query.
	MaxSparseNonZeros = 1 << 15
	// MaxIntID is the largest integer id: search results carry ids as
	// int64 (with -1 for "no result"), and a collection keeps the keys
	// from 2^63 up for its string ids.
	MaxIntID = math.MaxInt64
	// MaxStringIDBytes bounds a string id (UTF-8, at least one byte). The
	// log stores its length as a uint16; 512 bytes holds any UUID, URL or
	// path-like key users bring from other databases (Chroma, Qdrant's
	// UUIDs), and keeps the id table small next to the vectors.
	MaxStringIDBytes = 512
	// MaxVectorFields bounds the vector fields of one collection: each
	// has its own index, its own file in every snapshot and its entry in
	// the manifest, which a reader accepts up to 64 KiB (package
	// snapshot); 64 fields of the longest name stay well inside that.
	MaxVectorFields = 64
	// MaxFieldName bounds a vector field's name in bytes (UTF-8). Names
	// are logged with every multi-field write, so they stay short;
	// Qdrant's longest examples are a few words.
	MaxFieldName = 255
	// MaxMultivectors bounds the vectors of one point in a multivector
	// field: ColBERT-style encoders emit one per token, and 2^12 covers a
	// passage of any model's context; each is a node of the field's
	// graph, and MAX_SIM re-scoring costs queries × vectors distances per
	// candidate.
	MaxMultivectors = 1 << 12
	// MaxFusedQueries bounds the sub-queries one fused (hybrid) query
	// runs (Qdrant's prefetches): each is a search of its own, of up to
	// MaxK results, so the bound is one on the work of one request.
	// Hybrid retrieval sends two or three; 64 is the number of fields a
	// collection can have.
	MaxFusedQueries = 64
	// MaxArchiveFileBytes bounds one file of a snapshot archive (package
	// collection, archive.go), as its tar header and the manifest state
	// it. A segment holds at most 2^32 nodes, but the largest a machine
	// of strata's kind builds is a few GiB; 1 TiB keeps every offset far
	// inside int64 and refuses a forged size before any byte is written.
	MaxArchiveFileBytes = 1 << 40
)

func outside(name string, low, high, got int) error {
	return errkind.New(errkind.Invalid, fmt.Sprintf("%s must be in [%d, %d], got %d", name, low, high, got))
}

// CheckDim checks a vector dimension.
func CheckDim(dim int) error {
	if dim < 1 || dim > MaxDim {
		return outside("dim", 1, MaxDim, dim)
	}
	return nil
}

// CheckM checks M (0, the default, must be filled in first).
func CheckM(m int) error {
	if m < MinM || m > MaxM {
		return outside("M", MinM, MaxM, m)
	}
	return nil
}

// CheckEfConstruction checks ef_construction (0, the default, must be
// filled in first).
func CheckEfConstruction(ef int) error {
	if ef < 1 || ef > MaxEfConstruction {
		return outside("ef_construction", 1, MaxEfConstruction, ef)
	}
	return nil
}

// CheckK checks the number of results of one query.
func CheckK(k int) error {
	if k < 1 || k > MaxK {
		return outside("k", 1, MaxK, k)
	}
	return nil
}

// CheckEf checks a search's ef; 0 means the default and passes.
func CheckEf(ef int) error {
	if ef < 0 || ef > MaxEf {
		return outside("ef", 0, MaxEf, ef)
	}
	return nil
}

// CheckSparseNonZeros checks the non-zeros of one sparse vector.
func CheckSparseNonZeros(n int) error {
	if n < 0 || n > MaxSparseNonZeros {
		return outside("sparse vector non-zeros", 0, MaxSparseNonZeros, n)
	}
	return nil
}

// CheckScan checks the page size of a scan; 0 means no limit and passes.
func CheckScan(limit int) error {
	if limit < 0 || limit > MaxScan {
		return outside("limit", 0, MaxScan, limit)
	}
	return nil
}

// CheckIntID checks an integer id.
func CheckIntID(id uint64) error {
	if id > MaxIntID {
		return errkind.New(errkind.Invalid, fmt.Sprintf("id %d exceeds the largest integer id %d", id, uint64(MaxIntID)))
	}
	return nil
}

// CheckStringID checks a string id: 1 to MaxStringIDBytes bytes of valid
// UTF-8.
func CheckStringID(id string) error {
	if len(id) < 1 || len(id) > MaxStringIDBytes {
		return errkind.New(errkind.Invalid, fmt.Sprintf("string id must be 1 to %d bytes, got %d", MaxStringIDBytes, len(id)))
	}
	if !utf8.ValidString(id) {
		return errkind.New(errkind.Invalid, fmt.Sprintf("string id %q is not valid UTF-8", id))
	}
	return nil
}

// CheckFieldName checks the name of a vector field: valid UTF-8 of at most
// MaxFieldName bytes ("" is the unnamed default field).
func CheckFieldName(name string) error {
	if len(name) > MaxFieldName {
		return errkind.New(errkind.Invalid, fmt.Sprintf("a vector field name must be at most %d bytes, got %d", MaxFieldName, len(name)))
	}
	if !utf8.ValidString(name) {
		return errkind.New(errkind.Invalid, fmt.Sprintf("vector field name %q is not valid UTF-8", name))
	}
	return nil
}

// CheckVectorFields checks the number of vector fields of a collection.
func CheckVectorFields(n int) error {
	if n < 0 || n > MaxVectorFields {
		return outside("vector fields", 0, MaxVectorFields, n)
	}
	return nil
}

// CheckMultivectors checks the number of vectors one point holds in a
// multivector field.
func CheckMultivectors(n int) error {
	if n < 1 || n > MaxMultivectors {
		return outside("vectors of one multivector", 1, MaxMultivectors, n)
	}
	return nil
}

// CheckFusedQueries checks the number of sub-queries of one fused query.
func CheckFusedQueries(n int) error {
	if n < 1 || n > MaxFusedQueries {
		return outside("sub-queries of a fused query", 1, MaxFusedQueries, n)
	}
	return nil
}

// CheckArchiveFileBytes checks the size of one file of a snapshot archive.
func CheckArchiveFileBytes(name string, size int64) error {
	if size < 0 || size > MaxArchiveFileBytes {
		return errkind.New(errkind.Invalid, fmt.Sprintf("the size of %s must be in [0, %d], got %d", name, int64(MaxArchiveFileBytes), size))
	}
	return nil
}
