package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// FuzzReadExpiries reads arbitrary expiry.idx files: ReadExpiries must not
// panic, and what it accepts must hold only what a collection writes.
func FuzzReadExpiries(f *testing.F) {
	seed := filepath.Join(f.TempDir(), "seed")
	if err := WriteExpiries(vfs.Default, seed, Expiries{Keys: []uint64{3, FirstStringKey}, At: []int64{1, 1 << 62}}); err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(seed)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), ExpiryName)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := ReadExpiries(vfs.Default, path)
		if err != nil {
			if !errors.Is(err, indexfile.ErrCorrupt) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not corruption", err)
			}
			return
		}
		if len(e.Keys) != len(e.At) {
			t.Fatalf("accepted %d times for %d keys", len(e.At), len(e.Keys))
		}
		for i, k := range e.Keys {
			if (i > 0 && k <= e.Keys[i-1]) || e.At[i] <= 0 {
				t.Fatalf("accepted entry %d: key %d at %d", i, k, e.At[i])
			}
		}
	})
}

// TestExpiriesRoundTripAndRefusals prevents a damaged expiry table from
// loading: keys out of order or repeated, a time of 0 or before the epoch.
func TestExpiriesRoundTripAndRefusals(t *testing.T) {
	path := filepath.Join(t.TempDir(), ExpiryName)
	good := Expiries{Keys: []uint64{1, 7, FirstStringKey + 1}, At: []int64{5, 1, 9}}
	if err := WriteExpiries(vfs.Default, path, good); err != nil {
		t.Fatal(err)
	}
	got, err := ReadExpiries(vfs.Default, path)
	if err != nil || !slices.Equal(got.Keys, good.Keys) || !slices.Equal(got.At, good.At) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	for name, bad := range map[string]Expiries{
		"out of order": {Keys: []uint64{7, 1}, At: []int64{1, 1}},
		"repeated":     {Keys: []uint64{7, 7}, At: []int64{1, 1}},
		"zero":         {Keys: []uint64{7}, At: []int64{0}},
		"negative":     {Keys: []uint64{7}, At: []int64{-1}},
	} {
		if err := WriteExpiries(vfs.Default, path, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadExpiries(vfs.Default, path); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if err := WriteExpiries(vfs.Default, path, Expiries{Keys: []uint64{1}}); err == nil {
		t.Error("a write of 1 key and no time succeeded")
	}
}

// TestManifestNamesItsExpiryTable prevents a manifest from naming an
// expiry table it does not list, or one of another name, and keeps a
// manifest with one readable.
func TestManifestNamesItsExpiryTable(t *testing.T) {
	m := testManifest()
	m.Format, m.WALHead = 2, true
	m.Expiry = ExpiryName
	m.Files = append(m.Files, File{Name: ExpiryName, Size: 1})
	data, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeManifest(data); err != nil || got.Expiry != ExpiryName {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	for name, edit := range map[string]func(*Manifest){
		"not listed": func(m *Manifest) { m.Files = m.Files[:1] },
		"other name": func(m *Manifest) { m.Expiry = "other.idx"; m.Files[1].Name = "other.idx" },
	} {
		bad := m
		bad.Files = slices.Clone(m.Files)
		edit(&bad)
		data, err := EncodeManifest(bad) // the writer may refuse it already
		if err == nil {
			_, err = DecodeManifest(data)
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}
