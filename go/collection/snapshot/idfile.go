package snapshot

import (
	"fmt"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/vfs"
)

// IDTableName is the id table's file name inside a snapshot directory.
const IDTableName = "ids.idx"

// FirstStringKey is the key of the first string id a collection hands
// out; every key of the id table is at least this.
const FirstStringKey = 1 << 63

// Section tags of ids.idx. Part of the file format: do not change.
var (
	tagIDKeys    = indexfile.FourCC("IKEY")
	tagIDOffsets = indexfile.FourCC("IOFF")
	tagIDData    = indexfile.FourCC("IDAT")
	tagIDNext    = indexfile.FourCC("INXT")
)

// IDTable is the content of ids.idx: string id Strings[i] has key Keys[i],
// and Next is the key the collection hands out next.
type IDTable struct {
	Keys    []uint64
	Strings []string
	Next    uint64
}

// WriteIDTable writes path atomically (see indexfile.Write).
func WriteIDTable(fs vfs.FS, path string, t IDTable) error {
	if len(t.Strings) != len(t.Keys) {
		return fmt.Errorf("snapshot: write %s: %d strings for %d keys", path, len(t.Strings), len(t.Keys))
	}
	offsets := make([]uint64, 1, len(t.Keys)+1)
	var data []byte
	for _, s := range t.Strings {
		data = append(data, s...)
		offsets = append(offsets, uint64(len(data)))
	}
	err := indexfile.Write(fs, path, []indexfile.Section{
		{Tag: tagIDKeys, Data: indexfile.BytesOf(t.Keys)},
		{Tag: tagIDOffsets, Data: indexfile.BytesOf(offsets)},
		{Tag: tagIDData, Data: data},
		{Tag: tagIDNext, Data: indexfile.BytesOf([]uint64{t.Next})},
	})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// ReadIDTable reads path and checks it whole: keys strictly ascending, from
// FirstStringKey up and below Next, Next at most 2^64-1, offsets within
// the data, every string a valid string id, no string twice.
func ReadIDTable(fs vfs.FS, path string) (IDTable, error) {
	f, err := indexfile.Read(fs, path, indexfile.ReadOptions{})
	if err != nil {
		return IDTable{}, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	bad := func(format string, args ...any) (IDTable, error) {
		return IDTable{}, fmt.Errorf("%w: %s: %s", ErrCorrupt, path, fmt.Sprintf(format, args...))
	}
	sections := make([][]byte, 4)
	for i, tag := range []uint32{tagIDKeys, tagIDOffsets, tagIDData, tagIDNext} {
		b, ok := f.Section(tag)
		if !ok {
			return bad("missing section %q", indexfile.TagName(tag))
		}
		sections[i] = b
	}
	keys, err1 := indexfile.ViewAs[uint64](sections[0])
	offsets, err2 := indexfile.ViewAs[uint64](sections[1])
	next, err3 := indexfile.ViewAs[uint64](sections[3])
	data := sections[2]
	if err1 != nil || err2 != nil || err3 != nil {
		return bad("misaligned section")
	}
	if len(next) != 1 || next[0] < FirstStringKey {
		return bad("next key section %v", next)
	}
	if len(offsets) != len(keys)+1 || offsets[0] != 0 || offsets[len(keys)] != uint64(len(data)) {
		return bad("%d offsets for %d keys and %d bytes", len(offsets), len(keys), len(data))
	}
	t := IDTable{Keys: append([]uint64(nil), keys...), Strings: make([]string, len(keys)), Next: next[0]}
	seen := make(map[string]struct{}, len(keys))
	for i, k := range keys {
		if k < FirstStringKey || k >= t.Next || (i > 0 && k <= keys[i-1]) {
			return bad("key %d at entry %d out of order or range (next %d)", k, i, t.Next)
		}
		if offsets[i+1] < offsets[i] || offsets[i+1] > uint64(len(data)) || offsets[i+1]-offsets[i] > limits.MaxStringIDBytes {
			return bad("offsets at entry %d", i)
		}
		s := string(data[offsets[i]:offsets[i+1]])
		if err := limits.CheckStringID(s); err != nil {
			return bad("entry %d: %v", i, err)
		}
		if _, dup := seen[s]; dup {
			return bad("string id %q listed twice", s)
		}
		seen[s] = struct{}{}
		t.Strings[i] = s
	}
	return t, nil
}
