package collection

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/limits"
)

// Ids and keys.
//
// A point's id is an integer in [0, 2^63) or a string (1 to
// limits.MaxStringIDBytes bytes of UTF-8); both kinds live in one
// collection. Below the collection's API everything (the index's labels,
// package meta's documents, the snapshot files) is keyed by uint64: an
// integer id n is its own key, and a string id gets a key from 2^63 up,
// handed out by the applier in log order (the next unused key; the counter
// is saved with the snapshot), so that replaying the log hands out the
// same keys again. The log holds ids, never keys. The id table below maps
// string -> key and back; a deleted string's mapping goes with its point
// (upserted again, it gets a new key). Keys never leave this package.
//
// Scan order (ScanIDs) is integers ascending, then strings in byte order.

// firstStringKey is the key of the first string id ever upserted.
const firstStringKey = snapshot.FirstStringKey

// ID is a point's id: an integer or a string. The zero ID is IntID(0);
// NoID marks "no result". IDs are comparable values (map keys, ==);
// making an integer ID allocates nothing.
type ID struct {
	str  string // the string id
	num  uint64 // the integer id
	kind idKind
}

type idKind uint8

const (
	kindInt idKind = iota
	kindString
	kindNone
)

// NoID stands for no id: the padding of query results.
var NoID = ID{kind: kindNone}

// IntID is the integer id n (checked when used: n must be below 2^63).
func IntID(n uint64) ID { return ID{num: n} }

// StringID is the string id s (checked when used: 1 to
// limits.MaxStringIDBytes bytes of UTF-8).
func StringID(s string) ID { return ID{str: s, kind: kindString} }

// IntIDs converts integer ids.
func IntIDs(ns []uint64) []ID {
	out := make([]ID, len(ns))
	for i, n := range ns {
		out[i] = ID{num: n}
	}
	return out
}

// IsString reports whether id is a string id.
func (id ID) IsString() bool { return id.kind == kindString }

// IsNone reports whether id is NoID.
func (id ID) IsNone() bool { return id.kind == kindNone }

// Int returns an integer id's value (0 for a string id).
func (id ID) Int() uint64 { return id.num }

// Str returns a string id's value ("" for an integer id).
func (id ID) Str() string { return id.str }

// String formats id for messages: 7, "doc-1" (quoted), or none.
func (id ID) String() string {
	switch id.kind {
	case kindString:
		return strconv.Quote(id.str)
	case kindNone:
		return "none"
	}
	return strconv.FormatUint(id.num, 10)
}

// CompareIDs orders ids as ScanIDs returns them: integers ascending, then
// strings in byte order.
func CompareIDs(a, b ID) int {
	if a.kind != b.kind {
		return cmp.Compare(a.kind, b.kind)
	}
	if a.kind == kindString {
		return strings.Compare(a.str, b.str)
	}
	return cmp.Compare(a.num, b.num)
}

// checkID validates one id of a write or lookup; what names it in the
// message ("ids[3]").
func checkID(id ID, i int) error {
	if id.kind == kindNone {
		return fmt.Errorf("%w: ids[%d] is NoID", ErrInvalid, i)
	}
	if id.kind == kindString {
		if err := limits.CheckStringID(id.str); err != nil {
			return fmt.Errorf("%w: ids[%d]: %w", ErrInvalid, i, err)
		}
		return nil
	}
	if err := limits.CheckIntID(id.num); err != nil {
		return fmt.Errorf("%w: ids[%d]: %w", ErrInvalid, i, err)
	}
	return nil
}

// checkIDs validates ids, and with unique that none appears twice. It
// reports whether any is a string.
func checkIDs(ids []ID, unique bool) (hasStrings bool, err error) {
	for i, id := range ids {
		if err := checkID(id, i); err != nil {
			return false, err
		}
		hasStrings = hasStrings || id.kind == kindString
	}
	if !unique || len(ids) < 2 {
		return hasStrings, nil
	}
	if !hasStrings {
		// The integer path checks as it always has, without a map of IDs.
		keys := make([]uint64, len(ids))
		for i, id := range ids {
			keys[i] = id.num
		}
		if err := batch.CheckIDs(keys); err != nil {
			return false, fmt.Errorf("collection: %w", err)
		}
		return false, nil
	}
	seen := make(map[ID]int, len(ids))
	for i, id := range ids {
		if j, dup := seen[id]; dup {
			return false, fmt.Errorf("%w: duplicate id %s in one batch (ids[%d] and ids[%d])", ErrInvalid, id, j, i)
		}
		seen[id] = i
	}
	return true, nil
}

// idTable maps string ids to their keys and back. The applier (holding
// Collection.applyMu) is its only writer; readers take mu shared.
type idTable struct {
	mu    sync.RWMutex
	keys  map[string]uint64
	names map[uint64]string
	next  uint64 // the key the next new string gets

	// order lists the strings in byte order for ScanIDs, rebuilt lazily
	// like package meta's id order: new strings wait in pending, deleted
	// ones stay listed (stale) until the next rebuild drops them.
	orderMu sync.Mutex
	sorted  []string
	pending []string
	stale   int
}

func newIDTable() *idTable {
	return &idTable{keys: map[string]uint64{}, names: map[uint64]string{}, next: firstStringKey}
}

// key returns the key of a string id that is present.
func (t *idTable) key(s string) (uint64, bool) {
	t.mu.RLock()
	k, ok := t.keys[s]
	t.mu.RUnlock()
	return k, ok
}

// name returns the string id of a key from 2^63 up, if it is present.
func (t *idTable) name(key uint64) (string, bool) {
	t.mu.RLock()
	s, ok := t.names[key]
	t.mu.RUnlock()
	return s, ok
}

// nextKey is the key the next new string id gets.
func (t *idTable) nextKey() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.next
}

// len is the number of string ids present.
func (t *idTable) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.keys)
}

// assign returns the key of s, handing out the next one if s is new. Only
// the applier calls it.
func (t *idTable) assign(s string) (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k, ok := t.keys[s]; ok {
		return k, nil
	}
	if t.next > batch.MaxKey {
		return 0, fmt.Errorf("collection: every string key has been handed out")
	}
	k := t.next
	t.next++
	t.keys[s], t.names[k] = k, s
	t.orderMu.Lock()
	t.pending = append(t.pending, s)
	t.orderMu.Unlock()
	return k, nil
}

// remove forgets the string ids of keys (others are ignored). Only the
// applier calls it, after the points are gone.
func (t *idTable) remove(keys []uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		if s, ok := t.names[k]; ok {
			delete(t.names, k)
			delete(t.keys, s)
			t.orderMu.Lock()
			t.stale++
			t.orderMu.Unlock()
		}
	}
}

// export returns the live keys ascending, their strings, and the counter:
// what a snapshot stores. The caller holds applyMu, so nothing changes
// meanwhile.
func (t *idTable) export() (keys []uint64, strs []string, next uint64) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	keys = make([]uint64, 0, len(t.names))
	for k := range t.names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	strs = make([]string, len(keys))
	for i, k := range keys {
		strs[i] = t.names[k]
	}
	return keys, strs, t.next
}

// importTable rebuilds a table from a snapshot's (checked) contents.
func importTable(keys []uint64, strs []string, next uint64) *idTable {
	t := newIDTable()
	t.next = next
	for i, k := range keys {
		t.keys[strs[i]], t.names[k] = k, strs[i]
	}
	t.pending = slices.Clone(strs)
	return t
}

// sortedNames returns every string id present, in byte order, possibly
// with some no longer present (check with key).
func (t *idTable) sortedNames() []string {
	// mu before orderMu, the order the writers (assign, remove) take them.
	t.mu.RLock()
	defer t.mu.RUnlock()
	t.orderMu.Lock()
	defer t.orderMu.Unlock()
	if len(t.pending) == 0 && t.stale <= 64+len(t.sorted)/4 {
		return t.sorted
	}
	merged := make([]string, 0, len(t.keys))
	for _, s := range t.sorted {
		if _, ok := t.keys[s]; ok {
			merged = append(merged, s)
		}
	}
	for _, s := range t.pending {
		if _, ok := t.keys[s]; ok {
			merged = append(merged, s)
		}
	}
	slices.Sort(merged)
	// A string deleted and upserted again is listed twice.
	t.sorted, t.pending, t.stale = slices.Compact(merged), nil, 0
	return t.sorted
}

// keyOf returns the key of id if the collection holds it. An id no write
// accepts (an integer from 2^63 up, whose key would be a string's; NoID)
// is held by no collection.
func (c *Collection) keyOf(id ID) (uint64, bool) {
	if id.kind != kindString {
		return id.num, id.kind == kindInt && id.num <= limits.MaxIntID && c.meta.Contains(id.num)
	}
	k, ok := c.ids.key(id.str)
	return k, ok && c.meta.Contains(k)
}

// liveKeyOf is keyOf for reads: an id expired at the read's clock
// reading (exp) is absent.
func (c *Collection) liveKeyOf(id ID, exp expiredSet) (uint64, bool) {
	k, ok := c.keyOf(id)
	return k, ok && !exp.has(k)
}

// idOf returns the id of a key, false if it is a string key no longer
// present (deleted since the key was read).
func (c *Collection) idOf(key uint64) (ID, bool) {
	if key < firstStringKey {
		return ID{num: key}, true
	}
	s, ok := c.ids.name(key)
	return ID{str: s, kind: kindString}, ok
}

// keysOf returns the keys of ids, in order, skipping string ids not
// present and ids no write accepts (see keyOf).
func (c *Collection) keysOf(ids []ID) []uint64 {
	keys := make([]uint64, 0, len(ids))
	for _, id := range ids {
		switch {
		case id.kind == kindInt && id.num <= limits.MaxIntID:
			keys = append(keys, id.num)
		case id.kind == kindString:
			if k, ok := c.ids.key(id.str); ok {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// resolve turns the string ids of f's id conditions into keys (a string
// not present matches nothing).
func (c *Collection) resolve(f *meta.Filter) *meta.Filter { return f.ResolveIDs(c.ids.key) }

// describeKey names a key's id for a message (keys never leave the
// engine, in messages neither).
func (c *Collection) describeKey(key uint64) string {
	if id, ok := c.idOf(key); ok {
		return id.String()
	}
	return "(deleted string id)"
}
