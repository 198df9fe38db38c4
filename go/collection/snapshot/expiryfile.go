package snapshot

import (
	"fmt"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

// ExpiryName is the expiry table's file name inside a snapshot directory.
const ExpiryName = "expiry.idx"

// Section tags of expiry.idx. Part of the file format: do not change.
var (
	tagExpiryKeys = indexfile.FourCC("EKEY")
	tagExpiryAt   = indexfile.FourCC("EXAT")
)

// Expiries is the content of expiry.idx: the point of key Keys[i] expires
// at At[i], Unix nanoseconds (> 0). Points not listed never expire.
type Expiries struct {
	Keys []uint64
	At   []int64
}

// WriteExpiries writes path atomically (see indexfile.Write).
func WriteExpiries(fs vfs.FS, path string, e Expiries) error {
	if len(e.At) != len(e.Keys) {
		return fmt.Errorf("snapshot: write %s: %d times for %d keys", path, len(e.At), len(e.Keys))
	}
	err := indexfile.Write(fs, path, []indexfile.Section{
		{Tag: tagExpiryKeys, Data: indexfile.BytesOf(e.Keys)},
		{Tag: tagExpiryAt, Data: indexfile.BytesOf(e.At)},
	})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// ReadExpiries reads path and checks it whole: as many times as keys,
// keys strictly ascending, every time above 0.
func ReadExpiries(fs vfs.FS, path string) (Expiries, error) {
	f, err := indexfile.Read(fs, path, indexfile.ReadOptions{})
	if err != nil {
		return Expiries{}, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	bad := func(format string, args ...any) (Expiries, error) {
		return Expiries{}, fmt.Errorf("%w: %s: %s", ErrCorrupt, path, fmt.Sprintf(format, args...))
	}
	keySection, ok1 := f.Section(tagExpiryKeys)
	atSection, ok2 := f.Section(tagExpiryAt)
	if !ok1 || !ok2 {
		return bad("missing section")
	}
	keys, err1 := indexfile.ViewAs[uint64](keySection)
	at, err2 := indexfile.ViewAs[int64](atSection)
	if err1 != nil || err2 != nil {
		return bad("misaligned section")
	}
	if len(keys) != len(at) {
		return bad("%d times for %d keys", len(at), len(keys))
	}
	for i, k := range keys {
		if i > 0 && k <= keys[i-1] {
			return bad("key %d at entry %d out of order", k, i)
		}
		if at[i] <= 0 {
			return bad("expiry %d at entry %d", at[i], i)
		}
	}
	return Expiries{Keys: append([]uint64(nil), keys...), At: append([]int64(nil), at...)}, nil
}
