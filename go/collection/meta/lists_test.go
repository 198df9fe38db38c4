package meta

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// mongoInventory is the inventory of the MongoDB manual's pages "Query an
// Array" and "Query an Array of Embedded Documents", one document per
// item (ids 0 to 4), followed by documents for the corners the manual
// leaves out.
var mongoInventory = []string{
	0: `{"item": "journal", "instock": [{"warehouse": "A", "qty": 5}, {"warehouse": "C", "qty": 15}], "tags": ["blank", "red"], "dim_cm": [14, 21]}`,
	1: `{"item": "notebook", "instock": [{"warehouse": "C", "qty": 5}], "tags": ["red", "blank"], "dim_cm": [14, 21]}`,
	2: `{"item": "paper", "instock": [{"warehouse": "A", "qty": 60}, {"warehouse": "B", "qty": 15}], "tags": ["red", "blank", "plain"], "dim_cm": [14, 21]}`,
	3: `{"item": "planner", "instock": [{"warehouse": "A", "qty": 40}, {"warehouse": "B", "qty": 5}], "tags": ["blank", "red"], "dim_cm": [22.85, 30]}`,
	4: `{"item": "postcard", "instock": [{"warehouse": "B", "qty": 15}, {"warehouse": "C", "qty": 35}], "tags": ["blue"], "dim_cm": [10, 15.25]}`,
	5: `{"item": "grid", "instock": [[{"warehouse": "A", "qty": 5}]], "tags": [["red", "blank"], "blue"], "dim_cm": []}`,
	6: `{"item": "deep", "instock": {"warehouse": "A", "qty": 1}, "tags": [{"t": ["red"]}, {"t": "blank"}], "dim_cm": [1, null]}`,
	7: `{"item": 7, "instock": [], "tags": [null, {}], "dim_cm": 3}`,
}

// TestListsFollowMongoSemantics pins the behaviour of paths through lists
// of objects and of $elemMatch, $size, $all and $type: the manual's
// answers for its inventory, and ours for lists of lists, objects among
// scalars and the types, through both evaluators.
func TestListsFollowMongoSemantics(t *testing.T) {
	x := NewIndex()
	docs := make([]Document, len(mongoInventory))
	for i, s := range mongoInventory {
		docs[i] = mustDoc(t, s)
		x.Put(uint64(i), docs[i])
	}
	for _, tc := range []struct {
		filter string
		want   []uint64
	}{
		// The manual, "Query an Array of Embedded Documents".
		{`{"instock": {"warehouse": "A", "qty": 5}}`, []uint64{0}},
		{`{"instock.qty": {"$lte": 20}}`, []uint64{0, 1, 2, 3, 4, 6}},
		{`{"instock.0.qty": {"$lte": 20}}`, []uint64{0, 1, 4, 5}}, // 5: instock.0 is a list, whose objects qty reaches
		{`{"instock": {"$elemMatch": {"qty": 5, "warehouse": "A"}}}`, []uint64{0}},
		{`{"instock": {"$elemMatch": {"qty": {"$gt": 10, "$lte": 20}}}}`, []uint64{0, 2, 4}},
		{`{"instock.qty": {"$gt": 10, "$lte": 20}}`, []uint64{0, 2, 3, 4}},
		{`{"instock.qty": 5, "instock.warehouse": "A"}`, []uint64{0, 3}},
		// The manual, "Query an Array".
		{`{"tags": ["red", "blank"]}`, []uint64{1, 5}},
		{`{"tags": {"$all": ["red", "blank"]}}`, []uint64{0, 1, 2, 3}},
		{`{"tags": "red"}`, []uint64{0, 1, 2, 3}},
		{`{"dim_cm": {"$gt": 25}}`, []uint64{3}},
		{`{"dim_cm": {"$gt": 15, "$lt": 20}}`, []uint64{0, 1, 2, 4}},
		{`{"dim_cm": {"$elemMatch": {"$gt": 22, "$lt": 30}}}`, []uint64{3}},
		{`{"dim_cm.1": {"$gt": 25}}`, []uint64{3}},
		{`{"tags": {"$size": 3}}`, []uint64{2}},
		// One list level per key: a list of lists is not opened by a path
		// or a scalar, but an element list equals a list operand.
		{`{"instock.qty": 5}`, []uint64{0, 1, 3}},
		{`{"instock.0.qty": 5}`, []uint64{0, 1, 5}},
		{`{"instock.0.0.qty": 5}`, []uint64{5}},
		{`{"tags.0": ["red", "blank"]}`, []uint64{5}},
		{`{"tags.t": "red"}`, []uint64{6}},
		{`{"tags.t": "blank"}`, []uint64{6}},
		{`{"tags.t": ["red"]}`, []uint64{6}},
		{`{"tags": {}}`, []uint64{7}},
		{`{"tags": {"t": "blank"}}`, []uint64{6}},
		{`{"tags": null}`, []uint64{7}},
		{`{"instock.warehouse": {"$exists": true}}`, []uint64{0, 1, 2, 3, 4, 6}},
		{`{"instock.qty": {"$ne": 5}}`, []uint64{2, 4, 5, 6, 7}},
		{`{"tags": {"$elemMatch": {"$size": 2}}}`, []uint64{5}},
		{`{"tags": {"$elemMatch": {"$elemMatch": {"$eq": "blank"}}}}`, []uint64{5}},
		{`{"tags": {"$elemMatch": {"t": {"$exists": false}}}}`, []uint64{7}},
		{`{"tags": {"$elemMatch": {"$exists": true}}}`, []uint64{0, 1, 2, 3, 4, 5, 6, 7}},
		{`{"tags": {"$elemMatch": {"$or": [{"t": "red"}, {"t": "blank"}]}}}`, []uint64{6}},
		{`{"instock": {"$elemMatch": {"qty": 5}}}`, []uint64{0, 1, 3}},
		{`{"instock": {"$size": 0}}`, []uint64{7}},
		{`{"dim_cm": {"$size": 2.0}}`, []uint64{0, 1, 2, 3, 4, 6}},
		{`{"tags": {"$all": [{"$elemMatch": {"t": "red"}}, {"t": "blank"}]}}`, []uint64{6}},
		{`{"tags": {"$all": []}}`, nil},
		{`{"tags": {"$all": [["red", "blank"], "blue"]}}`, []uint64{5}},
		// $type: the value or an element; "array" the list itself.
		{`{"item": {"$type": "string"}}`, []uint64{0, 1, 2, 3, 4, 5, 6}},
		{`{"item": {"$type": ["int", "null"]}}`, []uint64{7}},
		{`{"dim_cm": {"$type": "double"}}`, []uint64{3, 4}},
		{`{"dim_cm": {"$type": 16}}`, []uint64{0, 1, 2, 3, 4, 6, 7}},
		{`{"dim_cm": {"$type": "number"}}`, []uint64{0, 1, 2, 3, 4, 6, 7}},
		{`{"dim_cm": {"$type": "null"}}`, []uint64{6}},
		{`{"dim_cm": {"$type": "array"}}`, []uint64{0, 1, 2, 3, 4, 5, 6}},
		{`{"tags": {"$type": "object"}}`, []uint64{6, 7}},
		{`{"instock": {"$type": "object"}}`, []uint64{0, 1, 2, 3, 4, 6}},
		{`{"tags.t": {"$type": "array"}}`, []uint64{6}},
		{`{"item": {"$type": "date"}}`, nil},
		{`{"item": {"$not": {"$type": "string"}}}`, []uint64{7}},
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
		if got := x.Select(f); !slices.Equal(got, byMatch) && len(got)+len(byMatch) > 0 {
			t.Errorf("Select %s: got %v, Match says %v", tc.filter, got, byMatch)
		}
	}
}

// TestListOperatorsRefuseBadOperands: each new operator names what it
// needs.
func TestListOperatorsRefuseBadOperands(t *testing.T) {
	for _, tc := range []struct{ filter, want string }{
		{`{"a": {"$elemMatch": 1}}`, `"$elemMatch" needs a non-empty query object, not a number`},
		{`{"a": {"$elemMatch": {}}}`, `not an empty object`},
		{`{"a": {"$elemMatch": {"$gtx": 1}}}`, `unknown operator "$gtx"`},
		{`{"a": {"$elemMatch": {"b": 1, "$gt": 1}}}`, `operator "$gt" needs a field`},
		{`{"a": {"$size": -1}}`, `"$size" needs a non-negative integer, not a number`},
		{`{"a": {"$size": 1.5}}`, `"$size" needs a non-negative integer`},
		{`{"a": {"$size": "1"}}`, `not a string`},
		{`{"a": {"$all": 1}}`, `"$all" needs a list, not a number`},
		{`{"a": {"$all": [{"$gt": 1}]}}`, `only {"$elemMatch": ...} may stand for a value`},
		{`{"a": {"$type": "float"}}`, `unknown type "float"`},
		{`{"a": {"$type": 99}}`, `unknown type 99`},
		{`{"a": {"$type": []}}`, `not an empty list`},
		{`{"a": {"$type": true}}`, `unknown type true`},
		{`{"$elemMatch": {"a": 1}}`, `operator "$elemMatch" needs a field`},
	} {
		_, err := ParseFilter([]byte(tc.filter))
		if !errors.Is(err, ErrInvalidFilter) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFilter(%s) = %v, want an error containing %q", tc.filter, err, tc.want)
		}
	}
}

// TestOldDocumentsReadUnchanged: documents of the scalar-lists era read
// back to the same bytes, and the new shapes are canonical too (keys
// sorted inside objects in lists).
func TestOldDocumentsReadUnchanged(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"tags":["sf","classic"],"n":{"x":1}}`, `{"n":{"x":1},"tags":["sf","classic"]}`},
		{`{"r": [{"b": 1, "a": [2, {"d": null, "c": []}]}, [[]]]}`, `{"r":[{"a":[2,{"c":[],"d":null}],"b":1},[[]]]}`},
	} {
		d, err := ReadDocument([]byte(tc.in))
		if err != nil || string(d.JSON()) != tc.want {
			t.Errorf("ReadDocument(%s) = %s, %v; want %s", tc.in, d.JSON(), err, tc.want)
		}
	}
}
