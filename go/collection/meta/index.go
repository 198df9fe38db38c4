package meta

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/strata-db/strata/go/internal/idtable"
)

// Index holds the metadata document of every live id of a collection and
// the postings that let Select answer a filter without reading documents.
// It is safe for concurrent use: writers are exclusive, readers share.
type Index struct {
	mu    sync.RWMutex
	slots idtable.Table // id -> slot
	ids   []uint64      // slot -> id; stale for free slots
	// docs: slot -> canonical JSON; nil for {} and free slots. It covers
	// the slots up to the last that ever held a document other than {}
	// (doc, setDoc): a collection of vectors without documents keeps
	// none, not a 24-byte slice header per point (issue 24's mmap memory).
	docs  [][]byte
	free  []uint32                 // free slots, reused last-in first-out
	alive bitset                   // live slots; covers every slot ever handed out
	paths map[string]*pathPostings // by route (see routeElements)
	// dotted lists the routes of each dotted path: "a.b" is a.b, and
	// a.$.b if a held a list of objects.
	dotted map[string][]*pathPostings
	order  idOrder
	// touched is writer scratch: the routes a removal went through, to
	// drop those it left empty.
	touched []*pathPostings
	// pathBuf is writer scratch for building dotted paths without
	// allocating on every key of every document.
	pathBuf []byte
}

// pathPostings indexes the values found at one route. Every slot in any
// of its postings is in exists; the scalar elements of a list are indexed
// like values (as a filter tests them), its objects and lists also at the
// route of the list's elements.
type pathPostings struct {
	route string
	// spread: the route enters a list, so a slot may have several values
	// here.
	spread  bool
	exists  posting // the path is present, whatever its value
	nulls   posting // null, or a list holding null
	trues   posting
	falses  posting
	lists   posting // a list (for $eq with a list operand)
	nested  posting // a list holding a list
	objects posting // an object, or a list holding one
	numbers posting // a number, or a list holding one: the union of nums
	strings posting // a string, or a list holding one: the union of strs
	nums    keyIndex[float64]
	strs    keyIndex[string]
	// datetimes: a string that ParseDatetime reads, or a list holding
	// one; times: one per distinct instant (microseconds since the
	// epoch), for datetime ranges. The datetime payload index.
	datetimes posting
	times     keyIndex[int64]
}

// NewIndex returns an empty index.
func NewIndex() *Index { return newIndexSized(0) }

// newIndexSized returns an empty index with room for n ids: no slice
// copying while Import fills it. (The slots were a Go map, whose 1M
// insertions were most of a 1M-point reopen's meta.Import: package
// idtable keeps the usual dense ids in a flat slice.)
func newIndexSized(n int) *Index {
	x := &Index{
		slots:  idtable.New(),
		ids:    make([]uint64, 0, n),
		alive:  newBitset(wordsFor(n)),
		paths:  make(map[string]*pathPostings),
		dotted: make(map[string][]*pathPostings),
	}
	return x
}

// Put inserts id's document, or replaces it if id is present.
func (x *Index) Put(id uint64, d Document) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.put(id, d)
}

// PutBatch puts docs[i] under ids[i] in order, under one lock, so that
// readers see none or all of the batch. A later duplicate id in the batch
// wins. It panics if the slices differ in length.
func (x *Index) PutBatch(ids []uint64, docs []Document) {
	if len(ids) != len(docs) {
		panic(fmt.Sprintf("meta: PutBatch with %d ids and %d documents", len(ids), len(docs)))
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, id := range ids {
		x.put(id, docs[i])
	}
}

func (x *Index) put(id uint64, d Document) {
	if slot, ok := x.slots.Get(id); ok {
		old := x.doc(slot)
		if bytes.Equal(old, d.json) {
			return
		}
		x.unindex(slot, old)
		x.setDoc(slot, d.json)
		x.walk(slot, d.fields, x.pathBuf[:0], true)
		return
	}
	x.add(id, d)
}

// add puts the document of an id the index does not hold.
func (x *Index) add(id uint64, d Document) {
	var slot uint32
	if n := len(x.free); n > 0 {
		slot = x.free[n-1]
		x.free = x.free[:n-1]
		x.ids[slot] = id
		x.setDoc(slot, d.json)
	} else {
		if len(x.ids) == 1<<32-1 {
			panic("meta: index full (2^32-1 documents)")
		}
		slot = uint32(len(x.ids))
		x.ids = append(x.ids, id)
		x.setDoc(slot, d.json)
		if need := wordsFor(len(x.ids)); need > len(x.alive) {
			x.alive = append(x.alive, make(bitset, max(need, 2*len(x.alive))-len(x.alive))...)
		}
	}
	x.slots.Set(id, slot)
	x.alive.set(slot)
	x.walk(slot, d.fields, x.pathBuf[:0], true)
	x.order.added(x.ids, id, slot)
}

// Delete removes the given ids and returns how many were present.
func (x *Index) Delete(ids []uint64) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, id := range ids {
		slot, ok := x.slots.Get(id)
		if !ok {
			continue
		}
		x.unindex(slot, x.doc(slot))
		x.slots.Del(id)
		x.setDoc(slot, nil)
		x.alive.clear(slot)
		x.free = append(x.free, slot)
		x.order.removed()
		n++
	}
	return n
}

// Get returns a copy of id's document in canonical JSON.
func (x *Index) Get(id uint64) (json []byte, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	slot, ok := x.slots.Get(id)
	if !ok {
		return nil, false
	}
	doc := x.doc(slot)
	if doc == nil {
		return []byte("{}"), true
	}
	return bytes.Clone(doc), true
}

// doc is slot's canonical JSON, nil for {} (and free slots).
func (x *Index) doc(slot uint32) []byte {
	if int(slot) < len(x.docs) {
		return x.docs[slot]
	}
	return nil
}

// setDoc sets slot's document (nil: {}), extending docs only for one
// that is not {}.
func (x *Index) setDoc(slot uint32, json []byte) {
	if int(slot) >= len(x.docs) {
		if json == nil {
			return
		}
		if int(slot) >= cap(x.docs) {
			x.docs = slices.Grow(x.docs, max(int(slot)+1, cap(x.ids))-len(x.docs))
		}
		x.docs = x.docs[:slot+1]
	}
	x.docs[slot] = json
}

// Contains reports whether id is in the index.
func (x *Index) Contains(id uint64) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.slots.Get(id)
	return ok
}

// Len returns the number of ids in the index.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.slots.Len()
}

// LenWithout is the number of documents whose id is not among ids
// (distinct), read at one moment: a delete of one of ids cannot fall
// between the count and the look-ups.
func (x *Index) LenWithout(ids []uint64) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.slots.Len()
	for _, id := range ids {
		if _, ok := x.slots.Get(id); ok {
			n--
		}
	}
	return n
}

// unindex removes a slot's document from the postings. The index only
// stores canonical JSON, so the old document is read back from it.
func (x *Index) unindex(slot uint32, doc []byte) {
	if doc == nil {
		return
	}
	fields, err := parseStored(doc)
	if err != nil {
		panic(fmt.Sprintf("meta: stored document of slot %d unreadable: %v", slot, err))
	}
	x.walk(slot, fields, x.pathBuf[:0], false)
	x.dropEmptyRoutes()
}

// walk adds (or removes) slot to (or from) the postings of every route of
// an object (see routeElements). prefix is the object's own route;
// appending to it reuses one buffer for the whole depth-first walk.
func (x *Index) walk(slot uint32, fields []field, prefix []byte, add bool) {
	for _, f := range fields {
		route := prefix
		if len(route) > 0 {
			route = append(route, '.')
		}
		x.walkValue(slot, append(route, f.key...), f.val, add)
	}
}

// walkValue indexes v at route, then what it holds: an object's fields
// below it, a list's objects and lists at route.$ (its scalars are
// indexed with the list, at route).
func (x *Index) walkValue(slot uint32, route []byte, v value, add bool) {
	pp := x.paths[string(route)]
	if pp == nil {
		if !add {
			panic(fmt.Sprintf("meta: removing slot %d from unknown route %q", slot, route))
		}
		pp = x.newRoute(string(route))
	}
	pp.update(slot, v, add)
	if !add {
		x.touched = append(x.touched, pp)
	}
	switch v.kind {
	case kindObject:
		x.walk(slot, v.fields, route, add)
	case kindList:
		elements := append(route, '.')
		elements = append(elements, routeElements...)
		for _, e := range v.list {
			if e.kind == kindObject || e.kind == kindList {
				x.walkValue(slot, elements, e, add)
			}
		}
		route = elements
	}
	x.pathBuf = route[:0] // keep the grown buffer
}

// newRoute adds the postings of a route, and lists them under the dotted
// path they are part of, if any.
func (x *Index) newRoute(route string) *pathPostings {
	pp := &pathPostings{route: route, spread: strings.Contains(route, "."+routeElements)}
	x.paths[route] = pp
	if dotted, ok := dottedOfRoute(route); ok {
		x.dotted[dotted] = append(x.dotted[dotted], pp)
	}
	return pp
}

// dropEmptyRoutes forgets the routes a removal left without a slot.
func (x *Index) dropEmptyRoutes() {
	for _, pp := range x.touched {
		if !pp.exists.empty() || x.paths[pp.route] != pp {
			continue
		}
		delete(x.paths, pp.route)
		if dotted, ok := dottedOfRoute(pp.route); ok {
			routes := slices.DeleteFunc(x.dotted[dotted], func(q *pathPostings) bool { return q == pp })
			if len(routes) == 0 {
				delete(x.dotted, dotted)
			} else {
				x.dotted[dotted] = routes
			}
		}
	}
	clear(x.touched)
	x.touched = x.touched[:0]
}

func (pp *pathPostings) update(slot uint32, v value, add bool) {
	change := (*posting).remove
	if add {
		change = (*posting).add
	}
	change(&pp.exists, slot)
	switch v.kind {
	case kindList:
		change(&pp.lists, slot)
		for _, item := range v.list {
			switch item.kind {
			case kindObject:
				change(&pp.objects, slot)
			case kindList:
				change(&pp.nested, slot)
			default:
				pp.updateScalar(slot, item, add, change)
			}
		}
	case kindObject:
		change(&pp.objects, slot)
	default:
		pp.updateScalar(slot, v, add, change)
	}
}

func (pp *pathPostings) updateScalar(slot uint32, v value, add bool, change func(*posting, uint32) bool) {
	switch v.kind {
	case kindNull:
		change(&pp.nulls, slot)
	case kindBool:
		if v.b {
			change(&pp.trues, slot)
		} else {
			change(&pp.falses, slot)
		}
	case kindNumber:
		change(&pp.numbers, slot)
		if add {
			pp.nums.add(normZero(v.num), slot)
		} else {
			pp.nums.remove(normZero(v.num), slot)
		}
	case kindString:
		change(&pp.strings, slot)
		if add {
			pp.strs.add(v.str, slot)
		} else {
			pp.strs.remove(v.str, slot)
		}
		if t, ok := ParseDatetime(v.str); ok {
			change(&pp.datetimes, slot)
			if add {
				pp.times.add(DatetimeMicros(t), slot)
			} else {
				pp.times.remove(DatetimeMicros(t), slot)
			}
		}
	}
}
