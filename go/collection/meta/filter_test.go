package meta

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/batch"
)

func mustFilter(t testing.TB, s string) *Filter {
	t.Helper()
	f, err := ParseFilter([]byte(s))
	if err != nil {
		t.Fatalf("ParseFilter(%s): %v", s, err)
	}
	return f
}

// semanticsDocs are the documents of the semantics table; id i is docs[i].
var semanticsDocs = []string{
	0:  `{}`,
	1:  `{"a": null}`,
	2:  `{"a": 1}`,
	3:  `{"a": 1.5}`,
	4:  `{"a": "1"}`,
	5:  `{"a": true}`,
	6:  `{"a": [1, 2, 3]}`,
	7:  `{"a": [null, "x"]}`,
	8:  `{"a": []}`,
	9:  `{"a": {"b": 1, "c": "x"}}`,
	10: `{"a": {"b": [2, 5], "c": null}}`,
	11: `{"a": "abc", "n": -0}`,
	12: `{"a": false, "n": 0}`,
	13: `{"a": [0, 10]}`,
	14: `{"a": "ab"}`,
	15: `{"a": {"b": {"c": {"d": 7}}}}`,
}

// TestFilterSemantics pins the Mongo semantics the package comment states,
// each case run through both the reference evaluator and the index.
func TestFilterSemantics(t *testing.T) {
	x := NewIndex()
	docs := make([]Document, len(semanticsDocs))
	for i, s := range semanticsDocs {
		docs[i] = mustDoc(t, s)
		x.Put(uint64(i), docs[i])
	}
	for _, tc := range []struct {
		filter string
		want   []uint64
	}{
		// null matches null, a list holding null, and missing.
		{`{"a": null}`, []uint64{0, 1, 7}},
		{`{"a": {"$eq": null}}`, []uint64{0, 1, 7}},
		{`{"a": {"$ne": null}}`, []uint64{2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15}},
		{`{"a": {"$exists": true}}`, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		{`{"a": {"$exists": false}}`, []uint64{0}},
		{`{"a": {"$in": [null]}}`, []uint64{0, 1, 7}},
		{`{"a": {"$nin": [null, 1]}}`, []uint64{3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15}},
		// 1 == 1.0, and type bracketing: "1" and true are not 1.
		{`{"a": 1.0}`, []uint64{2, 6}},
		{`{"a": {"$in": [1, "x"]}}`, []uint64{2, 6, 7}},
		{`{"a": true}`, []uint64{5}},
		{`{"a": "1"}`, []uint64{4}},
		{`{"n": 0}`, []uint64{11, 12}},
		{`{"n": -0.0}`, []uint64{11, 12}},
		// A list matches when any element does; $ne on a list is the complement.
		{`{"a": 2}`, []uint64{6}},
		{`{"a": {"$ne": 2}}`, []uint64{0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		{`{"a": {"$gt": 2}}`, []uint64{6, 13}},
		{`{"a": {"$gt": 1, "$lt": 5}}`, []uint64{3, 6, 13}}, // [0, 10]: each operator on its own element
		{`{"a": {"$gte": 1, "$lte": 1}}`, []uint64{2, 6, 13}},
		{`{"a": {"$lt": 1}}`, []uint64{13}},
		// $eq with a list operand matches the exact list, not a permutation.
		{`{"a": [1, 2, 3]}`, []uint64{6}},
		{`{"a": [1.0, 2, 3]}`, []uint64{6}},
		{`{"a": [3, 2, 1]}`, nil},
		{`{"a": [1, 2]}`, nil},
		{`{"a": []}`, []uint64{8}},
		{`{"a": [null, "x"]}`, []uint64{7}},
		{`{"a": [[1, 2, 3]]}`, nil},
		{`{"a": {"$in": [[], 1.5]}}`, []uint64{3, 8}},
		{`{"a": {"$ne": [1, 2, 3]}}`, []uint64{0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		// Strings order by bytes and never compare with numbers.
		{`{"a": {"$gt": "ab"}}`, []uint64{7, 11}},
		{`{"a": {"$gte": "ab"}}`, []uint64{7, 11, 14}},
		{`{"a": {"$lt": "ab"}}`, []uint64{4}},
		{`{"a": {"$gt": "1"}}`, []uint64{7, 11, 14}},
		{`{"a": {"$gte": 0}}`, []uint64{2, 3, 6, 13}},
		// Objects: dotted paths and whole-object equality regardless of key order.
		{`{"a.b": 1}`, []uint64{9}},
		{`{"a.b": 5}`, []uint64{10}},
		{`{"a.b": {"$gt": 1}}`, []uint64{10}},
		{`{"a.c": null}`, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15}},
		{`{"a.b.c.d": 7}`, []uint64{15}},
		{`{"a.b.c": {"d": 7}}`, []uint64{15}},
		{`{"a.b.c": {"d": 7.0, "e": null}}`, nil},
		{`{"a": {"c": "x", "b": 1}}`, []uint64{9}},
		{`{"a": {"b": 1}}`, nil},
		{`{"a": {}}`, nil},
		{`{"a.b": {"$exists": true}}`, []uint64{9, 10, 15}},
		{`{"a.0": 1}`, []uint64{6}}, // a position in a list, as in Mongo
		{`{"a.1": {"$gt": 5}}`, []uint64{13}},
		{`{"a.3": {"$exists": true}}`, nil},
		// $not is a complement, missing fields included.
		{`{"a": {"$not": {"$gt": 1}}}`, []uint64{0, 1, 2, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15}},
		{`{"a": {"$not": {"$gt": 1, "$lt": 5}}}`, []uint64{0, 1, 2, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15}},
		{`{"$not": {"a": {"$exists": true}}}`, []uint64{0}},
		{`{"$not": {}}`, nil},
		// Logical operators and implicit $and.
		{`{"$or": [{"a": 1}, {"a": "ab"}]}`, []uint64{2, 6, 14}},
		{`{"$nor": [{"a": 1}, {"a": {"$exists": true}}]}`, []uint64{0}},
		{`{"$and": [{"a": {"$gt": 0}}, {"a": {"$lt": 2}}]}`, []uint64{2, 3, 6, 13}},
		{`{"a": {"$gte": 0}, "n": {"$exists": false}}`, []uint64{2, 3, 6, 13}},
		{`{"$and": [{}], "$or": [{}, {"a": 1}]}`, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		{`{"a": {"$in": []}}`, nil},
		{`{"a": {"$nin": []}}`, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		{`{"missing": {"$gt": 0}}`, nil},
		{`{"missing": {"$ne": 1}}`, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		// $regex finds its pattern anywhere in a string, or in a string of a list;
		// never in a number.
		{`{"a": {"$regex": "b"}}`, []uint64{11, 14}},
		{`{"a": {"$regex": "^ab$"}}`, []uint64{14}},
		{`{"a": {"$regex": "x"}}`, []uint64{7}},
		{`{"a": {"$regex": ""}}`, []uint64{4, 7, 11, 14}},
		{`{"a": {"$regex": "1"}}`, []uint64{4}},
		{`{"a": {"$regex": "AB"}}`, nil},
		{`{"a": {"$regex": "AB", "$options": "i"}}`, []uint64{11, 14}},
		{`{"a": {"$options": "i", "$regex": "^A"}}`, []uint64{11, 14}},
		{`{"a.c": {"$regex": "x"}}`, []uint64{9}},
		{`{"a": {"$not": {"$regex": "b"}}}`, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 15}},
		{`{"a": {"$elemMatch": {"$regex": "x"}}}`, []uint64{7}},
	} {
		f := mustFilter(t, tc.filter)
		var byMatch []uint64
		for i, d := range docs {
			if f.Match(d) {
				byMatch = append(byMatch, uint64(i))
			}
		}
		if !slices.Equal(byMatch, tc.want) {
			t.Errorf("Match %s: got %v, want %v", tc.filter, byMatch, tc.want)
		}
		if got := x.Select(f); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("Select %s: got %v, want %v", tc.filter, got, tc.want)
		}
		if got := x.Count(f); got != len(tc.want) {
			t.Errorf("Count %s: got %d, want %d", tc.filter, got, len(tc.want))
		}
	}
}

// TestMatchesAllOnlyForNoConditions keeps callers from skipping a filter
// that has a condition.
func TestMatchesAllOnlyForNoConditions(t *testing.T) {
	for _, s := range []string{``, ` `, `null`, `{}`, `{"$and": [{}]}`, `{"$or": [{}, {"a": 1}]}`, `{"$not": {"$not": {}}}`} {
		if !mustFilter(t, s).MatchesAll() {
			t.Errorf("%q: MatchesAll false", s)
		}
	}
	for _, s := range []string{`{"a": 1}`, `{"$not": {}}`, `{"a": {"$nin": []}}`, `{"$nor": [{}]}`} {
		if mustFilter(t, s).MatchesAll() {
			t.Errorf("%q: MatchesAll true", s)
		}
	}
	var nilFilter *Filter
	if !nilFilter.MatchesAll() || !nilFilter.Match(Document{}) {
		t.Error("a nil filter must match everything")
	}
}

// TestParseFilterErrorsNameThePart checks every rejected form and that the
// error says where it is.
func TestParseFilterErrorsNameThePart(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"year": {"$gtx": 5}}`, `at "year": unknown operator "$gtx"`},
		{`{"year": {"$in": 5}}`, `at "year": "$in" needs a list, not a number`},
		{`{"year": {"$nin": {"a": 1}}}`, `at "year": "$nin" needs a list, not an object`},
		{`{"year": {"$gt": {"a": 1}}}`, `at "year": "$gt" cannot compare with an object`},
		{`{"year": {"$gte": [1]}}`, `at "year": "$gte" cannot compare with a list`},
		{`{"year": {"$lt": true}}`, `at "year": "$lt" cannot compare with a bool`},
		{`{"year": {"$lte": null}}`, `at "year": "$lte" cannot compare with null`},
		{`{"year": {"$exists": 1}}`, `at "year": "$exists" needs true or false, not a number`},
		{`{"year": {"$not": 5}}`, `at "year": "$not" needs an object of operators such as {"$gt": 5}, not a number`},
		{`{"year": {"$not": {}}}`, `at "year": "$not" needs an object of operators such as {"$gt": 5}, not an empty object`},
		{`{"year": {"$not": {"a": 1}}}`, `at "year": "$not" needs an object of operators`},
		{`{"year": {"$not": {"$gt": []}}}`, `at "year": "$gt" cannot compare with a list`},
		{`{"t": {"$regex": 1}}`, `at "t": "$regex" needs a string (a regular expression), not a number`},
		{`{"t": {"$regex": "("}}`, `at "t": "$regex": error parsing regexp: missing closing )`},
		{`{"t": {"$options": "i"}}`, `at "t": "$options" goes with "$regex" in the same object`},
		{`{"t": {"$regex": "a", "$options": "x"}}`, `at "t": "$options": unknown flag 'x'`},
		{`{"t": {"$regex": "a", "$options": 1}}`, `at "t": "$options" needs a string of flags`},
		{`{"t": {"$regex": "` + strings.Repeat("a", 4097) + `"}}`, `"$regex" pattern is 4097 bytes, more than 4096`},
		{`{"year": {"$gt": 1, "x": 2}}`, `at "year": cannot mix operators and fields in one object: "x" is not an operator`},
		{`{"year": {"$or": []}}`, `at "year": operator "$or" combines whole filters`},
		{`{"$and": []}`, `at "$and": "$and" needs a non-empty list of objects, not an empty list`},
		{`{"$or": {}}`, `at "$or": "$or" needs a non-empty list of objects, not an empty object`},
		{`{"$nor": 1}`, `at "$nor": "$nor" needs a non-empty list of objects, not a number`},
		{`{"$or": [{}, 1]}`, `at "$or[1]": "$or" needs a non-empty list of objects, not a list holding a number`},
		{`{"$or": [{"a": 1}, {"b": {"$in": 1}}]}`, `at "$or[1].b": "$in" needs a list`},
		{`{"$and": [{"$or": [{"c": {"$foo": 1}}]}]}`, `at "$and[0].$or[0].c": unknown operator "$foo"`},
		{`{"$not": 1}`, `at "$not": "$not" needs an object, not a number`},
		{`{"$not": {"x": {"$bad": 1}}}`, `at "$not.x": unknown operator "$bad"`},
		{`{"$gt": 1}`, `operator "$gt" needs a field`},
		{`{"$where": "1"}`, `unknown top-level operator "$where"`},
		{`{"": 1}`, `: empty field name`},
		{`{"$or": [{"": 1}]}`, `at "$or[0]": empty field name`},
		{`{"a..b": 1}`, `at "a..b": field path "a..b" has an empty part`},
		{`{".a": 1}`, `has an empty part`},
		{`{"a.$b": 1}`, `field path "a.$b" has a part starting with '$'`},
		{`[1]`, `a filter must be a JSON object, not a list`},
		{`"a"`, `a filter must be a JSON object, not a string`},
		{`{"a": 1, "a": 2}`, `duplicate key "a"`},
		{`{"a": 1`, `offset 7: unexpected end of input, expected ',' or '}'`},
		{`{"a": 1e999}`, `out of the float64 range`},
		{strings.Repeat(`{"$not":`, 70) + `{}` + strings.Repeat(`}`, 70), `nesting deeper than 64 levels`},
	} {
		_, err := ParseFilter([]byte(tc.in))
		if err == nil {
			t.Errorf("ParseFilter(%.50s) accepted", tc.in)
			continue
		}
		if !errors.Is(err, ErrInvalidFilter) || !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("ParseFilter(%.50s): %v does not wrap ErrInvalidFilter and batch.ErrInvalid", tc.in, err)
		}
		if !strings.HasPrefix(err.Error(), "meta: invalid filter: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFilter(%.50s) = %q, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

// TestFilterOperandsMayHoldAnyJSON: $eq and $in operands are values, and a
// value no document can hold (a list of objects) simply matches nothing.
func TestFilterOperandsMayHoldAnyJSON(t *testing.T) {
	x := NewIndex()
	x.Put(1, mustDoc(t, `{"a": [1]}`))
	for _, s := range []string{`{"a": [{"b": 1}]}`, `{"a": {"$in": [[1], [[1]]]}}`, `{"a": {"$eq": {"$x": 1}}}`} {
		f := mustFilter(t, s)
		want := f.Match(mustDoc(t, `{"a": [1]}`))
		if got := x.Count(f); got != map[bool]int{false: 0, true: 1}[want] {
			t.Errorf("%s: Count %d, Match %v", s, got, want)
		}
	}
}

func ExampleParseFilter() {
	f, _ := ParseFilter([]byte(`{"year": {"$gte": 1960}, "tags": "sf"}`))
	d, _ := ParseDocument([]byte(`{"title": "Dune", "year": 1965, "tags": ["sf", "classic"]}`))
	fmt.Println(f.Match(d))
	_, err := ParseFilter([]byte(`{"year": {"$gtx": 5}}`))
	fmt.Println(err)
	// Output:
	// true
	// meta: invalid filter: at "year": unknown operator "$gtx"
}
