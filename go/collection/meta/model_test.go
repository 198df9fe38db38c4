package meta

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
)

// gen builds random documents and filters as JSON text over a small
// vocabulary, so that filters often hit: the same few paths, numbers that
// collide as 1, 1.0 and 1e0, strings that order in interesting ways, nulls,
// lists, nested objects and missing fields.
type gen struct{ r *rand.Rand }

var (
	genTopKeys = []string{"a", "b", "c", "n", "t"}
	genSubKeys = []string{"x", "y", "z"}
	genPaths   = []string{"a", "b", "c", "n", "t", "n.x", "n.y", "n.x.z", "n.x.y", "missing", "a.x",
		"a.y", "b.x.z", "t.z", "a.0", "a.1.x", "b.0.0", "n.x.0", "t.0.y"}
	// genElemPaths are the paths inside an element, for $elemMatch.
	genElemPaths = []string{"x", "y", "z", "x.z", "x.0", "y.y"}
	genStrings   = []string{`""`, `"a"`, `"b"`, `"ab"`, `"ba"`, `"é"`, `"A"`}
	genNumbers   = []string{"0", "-0", "1", "1.0", "1e0", "-1", "2", "2.5", "-2.5", "3", "10", "0.5", "-3"}
	genOperator  = []string{"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$not",
		"$elemMatch", "$size", "$all", "$type", "$regex"}
	// genRegexes are $regex arguments, some with $options, over genStrings.
	genRegexes = []string{`"a"`, `"^a"`, `"b$"`, `""`, `"A"`, `"A", "$options": "i"`, `"^É", "$options": "i"`,
		`"a|é"`, `"^$"`}
	genTypes = []string{`"string"`, `"number"`, `"int"`, `"double"`, `"bool"`, `"null"`, `"object"`,
		`"array"`, `"long"`, `2`, `16`, `["null", "array"]`, `"date"`}
)

func (g gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g gen) scalar() string {
	switch g.r.IntN(10) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[g.r.IntN(2)]
	case 2, 3, 4, 5:
		return g.pick(genNumbers)
	default:
		return g.pick(genStrings)
	}
}

// list is a list of scalars, or now and then (depth permitting) one
// holding objects and lists too.
func (g gen) list(depth int) string {
	items := make([]string, g.r.IntN(4))
	composite := depth < 3 && g.r.IntN(2) == 0
	for i := range items {
		switch n := g.r.IntN(10); {
		case composite && n < 4:
			items[i] = g.object(genSubKeys, depth+1)
		case composite && n < 5:
			items[i] = g.list(depth + 1)
		default:
			items[i] = g.scalar()
		}
	}
	return "[" + strings.Join(items, ",") + "]"
}

// value is a document value; depth bounds nesting.
func (g gen) value(depth int) string {
	switch n := g.r.IntN(10); {
	case n < 6 || depth >= 3:
		return g.scalar()
	case n < 8:
		return g.list(depth)
	default:
		return g.object(genSubKeys, depth+1)
	}
}

func (g gen) object(keys []string, depth int) string {
	var parts []string
	for _, k := range keys {
		if g.r.IntN(10) < 7 {
			v := g.value(depth)
			if k == "c" {
				v = g.scalar() // a path without lists, where ranges fold into intervals
			}
			parts = append(parts, fmt.Sprintf("%q: %s", k, v))
		}
	}
	g.r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	return "{" + strings.Join(parts, ", ") + "}"
}

func (g gen) document() string { return g.object(genTopKeys, 1) }

// operand is any value a filter may compare with, including ones no
// document holds.
func (g gen) operand() string {
	switch g.r.IntN(12) {
	case 0:
		return g.list(2)
	case 1:
		return g.object(genSubKeys, 3)
	default:
		return g.scalar()
	}
}

func (g gen) rangeOperand() string {
	if g.r.IntN(3) == 0 {
		return g.pick(genStrings)
	}
	return g.pick(genNumbers)
}

func (g gen) operators(depth int) string {
	n := 1
	if g.r.IntN(5) == 0 {
		n = 2
	}
	var parts []string
	seen := map[string]bool{}
	for len(parts) < n {
		op := g.pick(genOperator)
		if seen[op] || (op == "$not" && depth > 3) {
			continue
		}
		seen[op] = true
		var arg string
		switch op {
		case "$eq", "$ne":
			arg = g.operand()
		case "$gt", "$gte", "$lt", "$lte":
			arg = g.rangeOperand()
		case "$in", "$nin":
			items := make([]string, g.r.IntN(4))
			for i := range items {
				items[i] = g.operand()
			}
			arg = "[" + strings.Join(items, ",") + "]"
		case "$exists":
			arg = []string{"true", "false"}[g.r.IntN(2)]
		case "$not":
			arg = g.operators(depth + 1)
		case "$elemMatch":
			if depth > 3 {
				arg = `{"$gt": 1}`
			} else if g.r.IntN(2) == 0 {
				arg = g.operators(depth + 1) // the value form
			} else {
				arg = g.elemQuery(depth + 1)
			}
		case "$size":
			arg = []string{"0", "1", "2", "3", "2.0"}[g.r.IntN(5)]
		case "$all":
			items := make([]string, g.r.IntN(3))
			for i := range items {
				if depth <= 3 && g.r.IntN(4) == 0 {
					items[i] = `{"$elemMatch": ` + g.elemQuery(depth+1) + `}`
				} else {
					items[i] = g.operand()
				}
			}
			arg = "[" + strings.Join(items, ",") + "]"
		case "$type":
			arg = g.pick(genTypes)
		case "$regex":
			arg = g.pick(genRegexes)
		}
		parts = append(parts, fmt.Sprintf("%q: %s", op, arg))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// elemQuery is the object form of $elemMatch: conditions on the paths
// of an element.
func (g gen) elemQuery(depth int) string {
	var parts []string
	used := map[string]bool{}
	for range 1 + g.r.IntN(2) {
		path := g.pick(genElemPaths)
		if used[path] {
			continue
		}
		used[path] = true
		if g.r.IntN(3) == 0 {
			parts = append(parts, fmt.Sprintf("%q: %s", path, g.operand()))
		} else {
			parts = append(parts, fmt.Sprintf("%q: %s", path, g.operators(depth)))
		}
	}
	if g.r.IntN(5) == 0 {
		parts = append(parts, fmt.Sprintf(`"$or": [%s, %s]`, g.elemQuery(depth+1), g.elemQuery(depth+1)))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (g gen) query(depth int) string {
	n := 1
	if g.r.IntN(4) == 0 {
		n = 2 - depth%2 // now and then an implicit $and, or (deeper) an empty {}
	}
	var parts []string
	used := map[string]bool{}
	for range n {
		switch k := g.r.IntN(10); {
		case k < 2 && depth < 3:
			op := []string{"$and", "$or", "$nor", "$not"}[g.r.IntN(4)]
			if used[op] {
				continue
			}
			used[op] = true
			if op == "$not" {
				parts = append(parts, fmt.Sprintf("%q: %s", op, g.query(depth+1)))
				continue
			}
			subs := make([]string, 1+g.r.IntN(3))
			for i := range subs {
				subs[i] = g.query(depth + 1)
			}
			parts = append(parts, fmt.Sprintf("%q: [%s]", op, strings.Join(subs, ", ")))
		default:
			path := g.pick(genPaths)
			if used[path] {
				continue
			}
			used[path] = true
			if g.r.IntN(3) == 0 {
				parts = append(parts, fmt.Sprintf("%q: %s", path, g.operand()))
			} else {
				parts = append(parts, fmt.Sprintf("%q: %s", path, g.operators(depth)))
			}
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// model is the brute-force twin of an Index.
type model map[uint64]Document

func (m model) matching(f *Filter) []uint64 {
	var ids []uint64
	for id, d := range m {
		if f.Match(d) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// checkAgainstModel compares every read of x with the model, for the
// given filters.
func checkAgainstModel(t *testing.T, x *Index, m model, filters []string, r *rand.Rand, when string) {
	t.Helper()
	if x.Len() != len(m) {
		t.Fatalf("%s: Len %d, model has %d", when, x.Len(), len(m))
	}
	checkIntegrity(t, x)
	for id, d := range m {
		got, ok := x.Get(id)
		if !ok || string(got) != string(d.JSON()) || !x.Contains(id) {
			t.Fatalf("%s: Get(%d) = %s, %v; want %s", when, id, got, ok, d.JSON())
		}
	}
	for _, s := range filters {
		f := mustFilter(t, s)
		want := m.matching(f)
		got := x.Select(f)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Select %s\n got  %v\n want %v", when, s, got, want)
		}
		if c := x.Count(f); c != len(want) {
			t.Fatalf("%s: Count %s = %d, want %d", when, s, c, len(want))
		}
		// Page through with a random page size, as a scan would.
		limit := 1 + r.IntN(7)
		var paged []uint64
		after, hasAfter := uint64(0), false
		for {
			page := x.IDsAfter(f, after, hasAfter, limit)
			paged = append(paged, page...)
			if len(page) < limit {
				break
			}
			after, hasAfter = page[len(page)-1], true
		}
		if !slices.Equal(paged, want) {
			t.Fatalf("%s: IDsAfter pages of %d for %s\n got  %v\n want %v", when, limit, s, paged, want)
		}
		if len(want) > 0 {
			cut := want[r.IntN(len(want))]
			var rest []uint64
			for _, id := range want {
				if id > cut {
					rest = append(rest, id)
				}
			}
			if got := x.IDsAfter(f, cut, true, 0); !slices.Equal(got, rest) {
				t.Fatalf("%s: IDsAfter(%s, %d) = %v, want %v", when, s, cut, got, rest)
			}
		}
	}
}

// checkIntegrity verifies the index's internal invariants: the id/slot
// maps agree, free slots are dead, and every posting slot is live.
func checkIntegrity(t *testing.T, x *Index) {
	t.Helper()
	x.mu.RLock()
	defer x.mu.RUnlock()
	if got := x.alive.count(); got != x.slots.Len() {
		t.Fatalf("alive has %d slots, %d ids", got, x.slots.Len())
	}
	x.slots.Each(func(id uint64, slot uint32) {
		if x.ids[slot] != id || !x.alive.has(slot) {
			t.Fatalf("id %d -> slot %d -> id %d (alive %v)", id, slot, x.ids[slot], x.alive.has(slot))
		}
	})
	for _, slot := range x.free {
		if x.alive.has(slot) || x.doc(slot) != nil {
			t.Fatalf("free slot %d is alive or has a document", slot)
		}
	}
	for path, pp := range x.paths {
		if pp.exists.empty() {
			t.Fatalf("path %q kept with no document", path)
		}
		present := newBitset(len(x.alive))
		pp.exists.orInto(present, newBitset(len(x.alive)))
		for i := range present {
			if present[i]&^x.alive[i] != 0 {
				t.Fatalf("path %q has dead slots in exists", path)
			}
		}
	}
}

// TestIndexMatchesModel is the main correctness test: random documents,
// random filters over every operator, random replacements and deletes, and
// a reload, with every read compared against brute-force Match.
func TestIndexMatchesModel(t *testing.T) {
	racetest.AnswersOnly(t)
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			g := gen{r}
			filters := make([]string, 60)
			for i := range filters {
				filters[i] = g.query(0)
			}
			x := NewIndex()
			m := model{}
			nextID := uint64(0)
			for round := range 8 {
				for range 40 + r.IntN(80) {
					switch op := r.IntN(10); {
					case op < 4: // new id, usually above all others
						id := nextID
						nextID += 1 + uint64(r.IntN(3))
						if r.IntN(4) == 0 {
							id = uint64(r.IntN(int(nextID) + 1))
						}
						d := mustDoc(t, g.document())
						x.Put(id, d)
						m[id] = d
					case op < 6 && len(m) > 0: // replace
						id := slices.Collect(maps.Keys(m))[r.IntN(len(m))]
						d := mustDoc(t, g.document())
						x.Put(id, d)
						m[id] = d
					case op < 8: // delete some, present or not
						var ids []uint64
						want := 0
						for range 1 + r.IntN(4) {
							id := uint64(r.IntN(int(nextID) + 2))
							if _, ok := m[id]; ok && !slices.Contains(ids, id) {
								want++
							}
							ids = append(ids, id)
						}
						for _, id := range ids {
							delete(m, id)
						}
						if got := x.Delete(ids); got != want {
							t.Fatalf("Delete(%v) = %d, want %d", ids, got, want)
						}
					default: // a batch, possibly with a repeated id
						n := 1 + r.IntN(5)
						ids := make([]uint64, n)
						docs := make([]Document, n)
						for i := range ids {
							ids[i] = uint64(r.IntN(int(nextID) + 5))
							docs[i] = mustDoc(t, g.document())
							m[ids[i]] = docs[i]
						}
						x.PutBatch(ids, docs)
					}
				}
				checkAgainstModel(t, x, m, filters, r, fmt.Sprintf("round %d", round))
			}
			ids, offsets, data := x.Export()
			y, err := Import(ids, offsets, data)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstModel(t, y, m, filters, r, "after Export/Import")
			ids2, offsets2, data2 := y.Export()
			if !slices.Equal(ids, ids2) || !slices.Equal(offsets, offsets2) || string(data) != string(data2) {
				t.Fatal("Export of an imported index differs from the original export")
			}
			// Everything deleted: every filter selects nothing, {} included.
			x.Delete(slices.Collect(maps.Keys(m)))
			clear(m)
			checkAgainstModel(t, x, m, append(filters, `{}`), r, "after deleting all")
			if len(x.paths) != 0 {
				t.Fatalf("%d paths left in an empty index", len(x.paths))
			}
		})
	}
}

// TestIndexManyDistinctKeys drives the key lists through their pending
// merge and compaction thresholds, which small random tests do not reach.
func TestIndexManyDistinctKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	x := NewIndex()
	m := model{}
	for round := range 4 {
		for range 1500 {
			id := uint64(r.IntN(3000))
			if r.IntN(3) == 0 {
				x.Delete([]uint64{id})
				delete(m, id)
				continue
			}
			d := mustDoc(t, fmt.Sprintf(`{"p": %d, "s": "k%04d", "l": [%d, %d]}`, r.IntN(5000)-2500, r.IntN(2000), r.IntN(50), r.IntN(50)))
			x.Put(id, d)
			m[id] = d
		}
		filters := []string{`{}`, `{"p": {"$gt": 0}}`, `{"p": {"$lte": -1200}}`, `{"s": {"$gte": "k1000", "$lt": "k1010"}}`,
			`{"l": {"$in": [3, 49]}}`, `{"p": {"$not": {"$gte": -100, "$lte": 100}}}`, `{"s": {"$lt": "k0005"}}`, `{"l": {"$gt": 48}}`,
			`{"p": {"$gt": -2000}}`, `{"s": {"$gte": "k0100"}}`, `{"p": {"$gte": 5, "$lte": 5}}`, `{"p": {"$gt": 5, "$lt": 3}}`,
			`{"p": {"$gt": 5, "$gte": 5, "$lt": 2000, "$lte": 1999}}`, `{"p": {"$gt": 0, "$lt": "z"}}`, `{"$and": [{"p": {"$lt": 10}}, {"s": "k0001"}, {"p": {"$gt": -10}}]}`,
			`{"l": {"$gt": 10, "$lt": 12}}`, `{"s": {"$gt": "k", "$lte": "k1999"}}`}
		checkAgainstModel(t, x, m, filters, r, fmt.Sprintf("round %d", round))
	}
}

// TestRangeIntervalsMatchModel checks every pair of range conditions on one
// path, in both orders, on a path without lists (where the index folds them
// into one interval, and may take the complement of the keys outside) and on
// a path with lists (where it must not).
func TestRangeIntervalsMatchModel(t *testing.T) {
	x := NewIndex()
	m := model{}
	for i := range 40 {
		var s string
		switch {
		case i < 20:
			s = fmt.Sprintf(`{"p": %d, "q": [%d, %d]}`, i%10, i%10, 9-i%10)
		case i < 30:
			s = fmt.Sprintf(`{"p": "s%d", "q": "s%d"}`, i%10, i%7)
		default:
			s = `{"p": null}`
		}
		m[uint64(i)] = mustDoc(t, s)
		x.Put(uint64(i), m[uint64(i)])
	}
	ops := []string{"$gt", "$gte", "$lt", "$lte"}
	bounds := []string{"-1", "0", "4.5", "5", "9", "10", `"s3"`, `"s"`, `"t"`}
	var filters []string
	for _, path := range []string{"p", "q"} {
		for _, op1 := range ops {
			for _, b1 := range bounds {
				filters = append(filters, fmt.Sprintf(`{%q: {%q: %s}}`, path, op1, b1))
				for _, op2 := range ops {
					for _, b2 := range bounds {
						filters = append(filters, fmt.Sprintf(`{"$and": [{%q: {%q: %s}}, {%q: {%q: %s}}]}`, path, op1, b1, path, op2, b2))
					}
				}
			}
		}
	}
	checkAgainstModel(t, x, m, filters, rand.New(rand.NewPCG(1, 1)), "intervals")
}
