package snapshot

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/vfs"
)

// Section tags of a state run (the package doc, "State runs"). Part of
// the file format: do not change.
var (
	tagStateKeys     = indexfile.FourCC("SKEY")
	tagStateDeleted  = indexfile.FourCC("SDEL")
	tagStateOffsets  = indexfile.FourCC("SOFF")
	tagStateData     = indexfile.FourCC("SDAT")
	tagStateStrOffs  = indexfile.FourCC("SSOF")
	tagStateStrData  = indexfile.FourCC("SSTR")
	tagStateExpiries = indexfile.FourCC("SEXP")
	tagStateNext     = indexfile.FourCC("SNXT")
)

// StateRun is the content of one state run file: the state, at the
// snapshot that wrote it, of the points whose documents, string ids or
// expiry times changed in the interval it covers. Entry i is key
// Keys[i]: deleted (Deleted[i] != 0: no document, string or expiry), or
// live with the document Data[Offsets[i]:Offsets[i+1]], the string id
// Strings[i] ("" for an integer key) and the expiry Expires[i] (0: none).
// Next is the key the collection hands out next to a new string id.
type StateRun struct {
	Keys    []uint64
	Deleted []byte
	Offsets []uint64
	Data    []byte
	Strings []string
	Expires []int64
	Next    uint64
}

// Len is the number of entries.
func (r *StateRun) Len() int { return len(r.Keys) }

// WriteStateRun writes path atomically (see indexfile.Write).
func WriteStateRun(fs vfs.FS, path string, r StateRun) error {
	n := len(r.Keys)
	if len(r.Deleted) != n || len(r.Offsets) != n+1 || len(r.Strings) != n || len(r.Expires) != n {
		return fmt.Errorf("snapshot: write %s: a state run of %d keys with %d flags, %d offsets, %d strings, %d expiries",
			path, n, len(r.Deleted), len(r.Offsets), len(r.Strings), len(r.Expires))
	}
	sections := []indexfile.Section{
		{Tag: tagStateKeys, Data: indexfile.BytesOf(r.Keys)},
		{Tag: tagStateDeleted, Data: r.Deleted},
		{Tag: tagStateOffsets, Data: indexfile.BytesOf(r.Offsets)},
		{Tag: tagStateData, Data: r.Data},
		{Tag: tagStateNext, Data: indexfile.BytesOf([]uint64{r.Next})},
	}
	// The string and expiry sections are left out when no entry has
	// one: most runs, and at a few hundred entries they were a third of
	// the file.
	if slices.ContainsFunc(r.Strings, func(s string) bool { return s != "" }) {
		strOffs := make([]uint64, 1, n+1)
		var strData []byte
		for _, s := range r.Strings {
			strData = append(strData, s...)
			strOffs = append(strOffs, uint64(len(strData)))
		}
		sections = append(sections, indexfile.Section{Tag: tagStateStrOffs, Data: indexfile.BytesOf(strOffs)},
			indexfile.Section{Tag: tagStateStrData, Data: strData})
	}
	if slices.ContainsFunc(r.Expires, func(e int64) bool { return e != 0 }) {
		sections = append(sections, indexfile.Section{Tag: tagStateExpiries, Data: indexfile.BytesOf(r.Expires)})
	}
	err := indexfile.Write(fs, path, sections)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// ReadStateRun reads path and checks it whole: keys strictly ascending,
// flags 0 or 1, offsets within the data, a deleted entry empty, a live
// entry's string id valid exactly when its key is a string key (from
// FirstStringKey, below Next), expiries not negative. The documents are
// checked by whoever parses them (meta.Import).
func ReadStateRun(fs vfs.FS, path string) (StateRun, error) {
	f, err := indexfile.Read(fs, path, indexfile.ReadOptions{})
	if err != nil {
		return StateRun{}, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	bad := func(format string, args ...any) (StateRun, error) {
		return StateRun{}, fmt.Errorf("%w: %s: %s", ErrCorrupt, path, fmt.Sprintf(format, args...))
	}
	tags := []uint32{tagStateKeys, tagStateDeleted, tagStateOffsets, tagStateData, tagStateStrOffs, tagStateStrData, tagStateExpiries, tagStateNext}
	sections := make([][]byte, len(tags))
	present := make([]bool, len(tags))
	for i, tag := range tags {
		sections[i], present[i] = f.Section(tag)
		if !present[i] && tag != tagStateStrOffs && tag != tagStateStrData && tag != tagStateExpiries {
			return bad("missing section %q", indexfile.TagName(tag))
		}
	}
	if present[4] != present[5] {
		return bad("one of the string sections without the other")
	}
	keys, err1 := indexfile.ViewAs[uint64](sections[0])
	offsets, err2 := indexfile.ViewAs[uint64](sections[2])
	strOffs, err3 := indexfile.ViewAs[uint64](sections[4])
	expires, err4 := indexfile.ViewAs[int64](sections[6])
	next, err5 := indexfile.ViewAs[uint64](sections[7])
	deleted, data, strData := sections[1], sections[3], sections[5]
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return bad("misaligned section")
	}
	n := len(keys)
	if !present[4] {
		strOffs = make([]uint64, n+1) // no entry has a string id
	}
	if !present[6] {
		expires = make([]int64, n) // none expires
	}
	switch {
	case len(next) != 1 || next[0] < FirstStringKey:
		return bad("next key section %v", next)
	case len(deleted) != n || len(expires) != n:
		return bad("%d flags and %d expiries for %d keys", len(deleted), len(expires), n)
	case len(offsets) != n+1 || offsets[0] != 0 || offsets[n] != uint64(len(data)):
		return bad("%d document offsets for %d keys and %d bytes", len(offsets), n, len(data))
	case len(strOffs) != n+1 || strOffs[0] != 0 || strOffs[n] != uint64(len(strData)):
		return bad("%d string offsets for %d keys and %d bytes", len(strOffs), n, len(strData))
	}
	r := StateRun{Keys: append([]uint64(nil), keys...), Deleted: append([]byte(nil), deleted...),
		Offsets: append([]uint64(nil), offsets...), Data: append([]byte(nil), data...),
		Strings: make([]string, n), Expires: append([]int64(nil), expires...), Next: next[0]}
	for i, k := range keys {
		if i > 0 && k <= keys[i-1] {
			return bad("key %d at entry %d out of order", k, i)
		}
		if offsets[i+1] < offsets[i] || strOffs[i+1] < strOffs[i] || strOffs[i+1]-strOffs[i] > limits.MaxStringIDBytes {
			return bad("offsets at entry %d", i)
		}
		s := string(strData[strOffs[i]:strOffs[i+1]])
		switch {
		case deleted[i] > 1:
			return bad("flag %d at entry %d", deleted[i], i)
		case deleted[i] == 1 && (offsets[i+1] != offsets[i] || s != "" || expires[i] != 0):
			return bad("deleted entry %d (key %d) holds a document, string or expiry", i, k)
		case expires[i] < 0:
			return bad("expiry %d at entry %d", expires[i], i)
		case k >= FirstStringKey && k >= r.Next:
			return bad("string key %d at entry %d not below next %d", k, i, r.Next)
		case deleted[i] == 0 && (k >= FirstStringKey) != (s != ""):
			return bad("entry %d: key %d with string id %q", i, k, s)
		}
		if s != "" {
			if err := limits.CheckStringID(s); err != nil {
				return bad("entry %d: %v", i, err)
			}
		}
		r.Strings[i] = s
	}
	return r, nil
}
