package statefile

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/errorfs"
)

func TestRoundTripAndMissingFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "state")
	if _, err := Read(vfs.Default, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	for _, doc := range []string{`{}`, `{"a":"b"}`, ``} {
		if err := Write(vfs.Default, name, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		got, err := Read(vfs.Default, name)
		if err != nil || string(got) != doc {
			t.Fatalf("read %q, %v; want %q", got, err, doc)
		}
	}
}

// TestEveryDamagedByteIsCorrupt flips each byte of a file and truncates it
// at each length: every one must be refused as ErrCorrupt, none read as
// another document.
func TestEveryDamagedByteIsCorrupt(t *testing.T) {
	good := Encode([]byte(`{"aliases":{"x":"y"}}`))
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		if _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v, want ErrCorrupt", i, err)
		}
		if _, err := Decode(good[:i]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: %v, want ErrCorrupt", i, err)
		}
	}
	if _, err := Decode(append(bytes.Clone(good), 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a byte after the JSON: %v, want ErrCorrupt", err)
	}
}

// TestFailedWriteKeepsTheOldFile: a write that fails on the way leaves
// the previous content readable.
func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "state")
	if err := Write(vfs.Default, name, []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	for n := 1; ; n++ {
		efs := errorfs.New(vfs.Default, errorfs.Rule{Op: errorfs.OpAny, N: n, Crash: true})
		if err := Write(efs, name, []byte(`{"v":2}`)); err == nil {
			break // past the last operation of a write
		}
		got, err := Read(vfs.Default, name)
		if err != nil || (string(got) != `{"v":1}` && string(got) != `{"v":2}`) {
			t.Fatalf("failure at op %d: read %q, %v", n, got, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode([]byte(`{"a":1}`)))
	f.Add([]byte("STRATAST"))
	f.Add(Encode(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not match ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(Encode(doc), data) {
			t.Fatalf("decoded %q from a file that is not its encoding", doc)
		}
	})
}
