package collection

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/indexfile"
)

// vectorsSection is the [offset, end) of the float vectors (VECS) in an
// index file, read from its section table (package indexfile's format).
func vectorsSection(t *testing.T, path string) (int, int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	count := int(binary.LittleEndian.Uint32(b[20:]))
	for i := range count {
		e := b[32+32*i:]
		if binary.LittleEndian.Uint32(e) == indexfile.FourCC("VECS") {
			off := int(binary.LittleEndian.Uint64(e[8:]))
			return off, off + int(binary.LittleEndian.Uint64(e[16:]))
		}
	}
	t.Fatalf("%s has no VECS section", path)
	return 0, 0
}

// A byte flipped in a segment's mapped vectors is not Open's to find: the
// background verifier finds it, and the collection then refuses queries
// and writes with a corruption error naming the segment and the section,
// deletes nothing, and says so in Info. With VerifyOnOpen, Open finds it
// and falls back on the previous snapshot, as for any damaged segment.
func TestDeferredCRCMismatchFailsTheCollection(t *testing.T) {
	for _, memory := range []Memory{MemoryRAM, MemoryMmap} {
		t.Run(memory.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			opts := testOptions()
			opts.Memory = memory
			c, err := Create(dir, opts, Tuning{CheckpointBytes: -1, VacuumRatio: -1})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(24, 24))
			m := model{}
			for i := range 3 {
				ids := make([]uint64, 500)
				for j := range ids {
					ids[j] = uint64(i*500 + j)
				}
				vecs := randomVectors(rng, len(ids))
				if err := c.Upsert(IntIDs(ids), vecs, nil); err != nil {
					t.Fatal(err)
				}
				for j, id := range ids {
					m[id] = entry{vec: vecs[j*testDim : (j+1)*testDim], doc: "{}"}
				}
				if i > 0 {
					if err := c.Checkpoint(); err != nil {
						t.Fatal(err)
					}
				}
			}
			live := c.Info().LastCheckpoint
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			seg := newestSegment(t, dir, live)
			from, to := vectorsSection(t, seg)
			flipByte(t, seg, (from+to)/2)
			before := listTree(t, dir)

			c, err = Open(dir, Tuning{CheckpointBytes: -1})
			if err != nil {
				t.Fatalf("Open with deferred CRCs refused the file: %v", err)
			}
			err = c.WaitVerified()
			if !errors.Is(err, ErrCorrupt) || errkind.Of(err) != errkind.Corrupt {
				t.Fatalf("WaitVerified: %v, want a corruption error", err)
			}
			for _, want := range []string{filepath.Base(seg), `"VECS"`, "crc mismatch"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("the error does not name %s: %v", want, err)
				}
			}
			in := c.Info()
			if in.Verification != VerifyFailed || in.VerifyError == "" {
				t.Fatalf("Info: verification %q, error %q", in.Verification, in.VerifyError)
			}
			if v := c.Describe()["verification"].(map[string]any); v["state"] != VerifyFailed {
				t.Fatalf("Describe: %v", v)
			}
			ids, dists := make([]ID, 5), make([]float32, 5)
			if _, err := c.Query(m[0].vec, 5, 0, nil, 1, ids, dists); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Query after a failed verification: %v", err)
			}
			if _, _, _, err := c.Get(IntIDs([]uint64{1}), true); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Get after a failed verification: %v", err)
			}
			if err := c.Upsert(IntIDs([]uint64{1}), m[0].vec, nil); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Upsert after a failed verification: %v", err)
			}
			if err := c.Close(); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Close: %v", err)
			}
			if after := listTree(t, dir); !sameNames(before, after) {
				t.Fatalf("files changed after a failed verification:\nbefore %v\nafter  %v", before, after)
			}

			// Verified before Open returns: the damaged snapshot is set
			// aside and the previous one, with the log since, holds every
			// point.
			c, err = Open(dir, Tuning{CheckpointBytes: -1, VerifyOnOpen: true})
			if err != nil {
				t.Fatal(err)
			}
			if fb := c.Info().Recovery.Fallback; fb == nil || fb.From != live {
				t.Fatalf("VerifyOnOpen: fallback %+v, want one from snapshot %d", fb, live)
			}
			if in := c.Info(); in.Verification != VerifyVerified || c.WaitVerified() != nil {
				t.Fatalf("VerifyOnOpen: verification %q", in.Verification)
			}
			checkModel(t, c, m)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An intact collection reopened with deferred CRCs answers at once, as
// after VerifyOnOpen, and its verification ends "verified".
func TestDeferredCRCIntactCollection(t *testing.T) {
	for _, memory := range []Memory{MemoryRAM, MemoryMmap} {
		t.Run(memory.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			opts := testOptions()
			opts.Memory = memory
			c, err := Create(dir, opts, Tuning{CheckpointBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(25, 25))
			m := model{}
			ids := make([]uint64, 1000)
			for j := range ids {
				ids[j] = uint64(j)
			}
			vecs := randomVectors(rng, len(ids))
			if err := c.Upsert(IntIDs(ids), vecs, nil); err != nil {
				t.Fatal(err)
			}
			for j, id := range ids {
				m[id] = entry{vec: vecs[j*testDim : (j+1)*testDim], doc: "{}"}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			for _, verify := range []bool{false, true} {
				c := mustOpen(t, dir, Tuning{CheckpointBytes: -1, VerifyOnOpen: verify})
				checkModel(t, c, m) // before the verifier is done, or not
				if err := c.WaitVerified(); err != nil {
					t.Fatalf("VerifyOnOpen %v: %v", verify, err)
				}
				if in := c.Info(); in.Verification != VerifyVerified || in.Unverified != 0 {
					t.Fatalf("VerifyOnOpen %v: verification %q, %d bytes left", verify, in.Verification, in.Unverified)
				}
				if got := c.Describe()["vectors"]; got == nil {
					t.Fatal("no vectors in Describe")
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// listTree lists the files under dir with their sizes.
func listTree(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameNames(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
