package meta

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
)

// treeGen builds random filter trees with the constructors of tree.go,
// over the vocabulary of gen, so that they often hit.
type treeGen struct {
	gen
	maxID uint64
	// inElement: the tree tests a list element, whose paths are
	// innerPath's.
	inElement bool
}

// genExplicitPaths are Qdrant-style paths over gen's documents, written
// as Qdrant keys: [] every element, [n] a position.
var genExplicitPaths = [][]PathStep{
	{Key("a")}, {Key("a"), Elements()}, {Key("a"), Elements(), Key("x")}, {Key("a"), Key("x")},
	{Key("b"), Elements(), Elements()}, {Key("b"), At(0)}, {Key("b"), At(1), Key("y")},
	{Key("n"), Key("x"), Elements(), Key("z")}, {Key("t"), Elements(), Key("y"), Elements()},
	{Key("n"), Key("y")}, {Key("b"), Elements(), Elements(), Key("x")},
}

// path is a dotted path, or now and then an explicit one.
func (g treeGen) path() Path {
	if g.inElement {
		return g.innerPath()
	}
	if g.r.IntN(3) == 0 {
		p, err := NewPath(genExplicitPaths[g.r.IntN(len(genExplicitPaths))]...)
		if err != nil {
			panic(err)
		}
		return p
	}
	p, err := ParsePath(g.pick(genPaths))
	if err != nil {
		panic(err)
	}
	return p
}

// innerPath is a path inside a list element, for ElemMatch and Nested;
// the empty path is the element itself.
func (g treeGen) innerPath() Path {
	if g.r.IntN(4) == 0 {
		return elementPath
	}
	if g.r.IntN(3) == 0 {
		p, err := NewPath([][]PathStep{{Key("x")}, {Key("y"), Elements()}, {Key("x"), Key("z")}}[g.r.IntN(3)]...)
		if err != nil {
			panic(err)
		}
		return p
	}
	p, err := ParsePath(g.pick(genElemPaths))
	if err != nil {
		panic(err)
	}
	return p
}

func (g treeGen) scalar() Scalar {
	switch g.r.IntN(8) {
	case 0:
		return Null()
	case 1:
		return Bool(g.r.IntN(2) == 0)
	case 2, 3, 4:
		s, _ := Number([]float64{0, 1, -1, 2, 2.5, -2.5, 3, 10, 0.5}[g.r.IntN(9)])
		return s
	}
	return String([]string{"", "a", "b", "ab", "ba", "é", "A", "a b", "B-A"}[g.r.IntN(9)])
}

func (g treeGen) scalars() []Scalar {
	out := make([]Scalar, g.r.IntN(4))
	for i := range out {
		out[i] = g.scalar()
	}
	return out
}

func (g treeGen) bounds() Bounds {
	var b Bounds
	for _, dst := range []**float64{&b.Gt, &b.Gte, &b.Lt, &b.Lte} {
		if g.r.IntN(3) == 0 {
			f := []float64{-1, 0, 0.5, 1, 2, 2.5, 3}[g.r.IntN(7)]
			*dst = &f
		}
	}
	return b
}

func (g treeGen) must(f *Filter, err error) *Filter {
	if err != nil {
		panic(err)
	}
	return f
}

func (g treeGen) tree(depth int) *Filter {
	n := g.r.IntN(23)
	if depth >= 3 {
		n = 5 + g.r.IntN(15)
	}
	kids := func() []*Filter {
		out := make([]*Filter, g.r.IntN(5))
		for i := range out {
			out[i] = g.tree(depth + 1)
		}
		return out
	}
	switch n {
	case 0:
		return And(kids()...)
	case 1:
		return Or(kids()...)
	case 2:
		return Not(g.tree(depth + 1))
	case 3, 4:
		k := kids()
		return AtLeast(g.r.IntN(len(k)+2)-1, k...)
	case 5:
		return Eq(g.path(), g.scalar())
	case 6:
		return In(g.path(), g.scalars()...)
	case 7:
		return Exists(g.path())
	case 8, 9:
		return g.must(Within(g.path(), g.bounds()))
	case 10:
		return Except(g.path(), g.scalars()...)
	case 11:
		return Words(g.path(), []string{"", "a", "A b", "b,a", "ba", "x"}[g.r.IntN(6)])
	case 12:
		mode := []func(Path, string) *Filter{Words, AnyWord, Phrase}[g.r.IntN(3)]
		return mode(g.path(), []string{"a b", "é", "ba A", "b a"}[g.r.IntN(4)])
	case 13:
		b := Bounds{}
		lo, hi := float64(g.r.IntN(3)), float64(g.r.IntN(4))
		b.Gte, b.Lte = &lo, &hi
		if g.r.IntN(2) == 0 {
			b = g.bounds()
		}
		return g.must(ValuesCount(g.path(), b))
	case 14:
		return IsEmpty(g.path())
	case 15:
		return IsNull(g.path())
	case 16, 17:
		ids := make([]uint64, g.r.IntN(6))
		for i := range ids {
			ids[i] = uint64(g.r.IntN(int(g.maxID) + 2))
		}
		strs := make([]string, g.r.IntN(3))
		for i := range strs {
			strs[i] = fmt.Sprintf("s%d", g.r.IntN(stringIDs+2))
		}
		return IDs(ids, strs)
	case 18:
		return All()
	case 20, 21:
		p := g.path()
		inner := treeGen{gen: g.gen, maxID: g.maxID, inElement: true}
		if n == 20 {
			return Nested(p, inner.tree(depth+1))
		}
		return ElemMatch(p, inner.tree(depth+1))
	case 22:
		return Size(g.path(), g.r.IntN(4)-1)
	}
	return None()
}

// stringIDs is how many string ids ("s0" ...) the model test's documents
// have, under the keys stringKey(0) ...; the filters also name two more
// that no document has.
const stringIDs = 8

func stringKey(i int) uint64 { return 1<<63 + uint64(i) }

// resolveString is the model test's string -> key table.
func resolveString(s string) (uint64, bool) {
	var i int
	if _, err := fmt.Sscanf(s, "s%d", &i); err != nil || i >= stringIDs {
		return 0, false
	}
	return stringKey(i), true
}

// TestTreeConstructorsAgreeWithMatch is the model test of the filter
// trees the Qdrant door builds: every condition of tree.go, and and/or/not/
// at-least over them, evaluated by Index.Select (postings) against
// Filter.MatchID on every document, after puts, replacements and deletes.
func TestTreeConstructorsAgreeWithMatch(t *testing.T) {
	racetest.AnswersOnly(t)
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			g := treeGen{gen: gen{r}, maxID: 200}
			x := NewIndex()
			m := model{}
			for round := range 4 {
				for range 120 {
					id := uint64(r.IntN(200))
					if r.IntN(10) == 0 {
						id = stringKey(r.IntN(stringIDs))
					}
					if r.IntN(6) == 0 {
						x.Delete([]uint64{id})
						delete(m, id)
						continue
					}
					d := mustDoc(t, g.document())
					x.Put(id, d)
					m[id] = d
				}
				for i := range 150 {
					f := g.tree(0)
					if i%2 == 0 {
						// Unresolved string ids match nothing, in both
						// evaluators; resolved ones their keys.
						f = f.ResolveIDs(resolveString)
					}
					var want []uint64
					for id, d := range m {
						if f.MatchID(id, d) {
							want = append(want, id)
						}
					}
					slices.Sort(want)
					got := x.Select(f)
					if !slices.Equal(got, want) {
						t.Fatalf("round %d filter %d: Select\n got  %v\n want %v", round, i, got, want)
					}
					if c := x.Count(f); c != len(want) {
						t.Fatalf("round %d filter %d: Count %d, want %d", round, i, c, len(want))
					}
				}
			}
		})
	}
}

// TestTreeLeavesFollowTheirDocs pins the meaning of each Qdrant-side leaf
// on hand-picked documents, as qdrant-client's local mode (Qdrant's
// reference) answers them, so that a change of meaning cannot hide in the
// model test (which only checks that the two evaluators agree).
func TestTreeLeavesFollowTheirDocs(t *testing.T) {
	docs := []string{
		`{}`, `{"f": null}`, `{"f": []}`, `{"f": [null]}`, `{"f": [null, 1]}`,
		`{"f": 1}`, `{"f": [0, 10]}`, `{"f": "Hello, World"}`, `{"f": ["x", "red car"]}`,
		`{"f": {"g": 1}}`, `{"f": true}`,
	}
	p, _ := ParsePath("f")
	one, five, zero := 1.0, 5.0, 0.0
	cases := []struct {
		name string
		f    *Filter
		want []uint64 // indexes into docs
	}{
		{"within (1,5) needs one element inside", must(Within(p, Bounds{Gt: &one, Lt: &five})), nil},
		{"within [1,5]", must(Within(p, Bounds{Gte: &one, Lte: &five})), []uint64{4, 5}},
		{"within, no bounds: any number", must(Within(p, Bounds{})), []uint64{4, 5, 6}},
		{"except 1: another value, objects too", Except(p, mustNumber(1)), []uint64{6, 7, 8, 9, 10}},
		{"except nothing", Except(p), []uint64{4, 5, 6, 7, 8, 9, 10}},
		{"words", Words(p, "world HELLO"), []uint64{7}},
		{"words need whole words", Words(p, "wor"), nil},
		{"text without words matches nothing", Words(p, " _ "), nil},
		{"values_count 0: missing, null, []", must(ValuesCount(p, Bounds{Lte: &zero})), []uint64{0, 1, 2}},
		{"values_count >= 2", must(ValuesCount(p, Bounds{Gt: &one})), []uint64{4, 6, 8}},
		{"is_empty: [null] is not", IsEmpty(p), []uint64{0, 1, 2}},
		{"is_null: null or a list holding it", IsNull(p), []uint64{1, 3, 4}},
		{"ids", IDs([]uint64{3, 1, 3, 99}, nil), []uint64{1, 3}},
		{"string ids unresolved match nothing", IDs(nil, []string{"a"}), nil},
		{"string ids resolved", IDs([]uint64{1}, []string{"a", "b"}).ResolveIDs(func(s string) (uint64, bool) {
			return 4, s == "a"
		}), []uint64{1, 4}},
		{"at least 2 of 3", AtLeast(2, IsNull(p), IDs([]uint64{1, 2}, nil), IsEmpty(p)), []uint64{1, 2}},
		{"or of nothing", Or(), nil},
		{"and of nothing", And(), []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	}
	x := NewIndex()
	for i, s := range docs {
		x.Put(uint64(i), mustDoc(t, s))
	}
	for _, c := range cases {
		if got := x.Select(c.f); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTreeConstructorsRefuseWhatNoDocumentHolds(t *testing.T) {
	nan := 0.0
	nan /= nan
	if _, err := Number(nan); err == nil {
		t.Error("Number(NaN) accepted")
	}
	if _, err := Within(dottedPath("f", []string{"f"}), Bounds{Gt: &nan}); err == nil {
		t.Error("a NaN bound accepted")
	}
	for _, bad := range []string{"", "a..b", "a.$b"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) accepted", bad)
		}
	}
}

func must(f *Filter, err error) *Filter {
	if err != nil {
		panic(err)
	}
	return f
}

func mustNumber(f float64) Scalar {
	s, err := Number(f)
	if err != nil {
		panic(err)
	}
	return s
}
