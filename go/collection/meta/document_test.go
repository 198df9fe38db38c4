package meta

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/batch"
)

func mustDoc(t testing.TB, s string) Document {
	t.Helper()
	d, err := ParseDocument([]byte(s))
	if err != nil {
		t.Fatalf("ParseDocument(%s): %v", s, err)
	}
	return d
}

// TestDocumentCanonicalJSON prevents two encodings of one document (key
// order, number spelling, escapes), which would make Put see a change where
// there is none and snapshots differ between equal indexes.
func TestDocumentCanonicalJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{}`},
		{` { } `, `{}`},
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{`{"a": {"z": true, "y": [1, "x", null, false]}}`, `{"a":{"y":[1,"x",null,false],"z":true}}`},
		{`{"n": 1.0}`, `{"n":1}`},
		{`{"n": -0}`, `{"n":-0}`},
		{`{"n": 1e21}`, `{"n":1e+21}`},
		{`{"n": 1E-7}`, `{"n":1e-7}`},
		{`{"n": 0.000001}`, `{"n":0.000001}`},
		{`{"n": 123456789012345678901.0}`, `{"n":1.2345678901234568e+20}`},
		{`{"n": 9007199254740992}`, `{"n":9007199254740992}`},
		{`{"n": -9007199254740992}`, `{"n":-9007199254740992}`},
		{`{"n": 1.5e18}`, `{"n":1.5e+18}`},
		{`{"n": 9007199254740994.0}`, `{"n":9.007199254740994e+15}`},
		{`{"n": 0.1}`, `{"n":0.1}`},
		{`{"n": -2.5e-3}`, `{"n":-0.0025}`},
		{`{"n": 1e-400}`, `{"n":0}`},
		{`{"s": "a\"b\\c\n\t\r\u0001\/é\u00e9\ud83d\ude00"}`, `{"s":"a\"b\\c\n\t\r\u0001/éé😀"}`},
		{`{"l": []}`, `{"l":[]}`},
		{`{"o": {}}`, `{"o":{}}`},
	} {
		d := mustDoc(t, tc.in)
		want := tc.want
		if strings.Contains(want, `\ufffd`) {
			want = strings.ReplaceAll(want, `\ufffd`, "\ufffd")
		}
		if got := string(d.JSON()); got != want {
			t.Errorf("ParseDocument(%s).JSON() = %s, want %s", tc.in, got, want)
		}
		again := mustDoc(t, string(d.JSON()))
		if !docsEqual(d, again) || string(again.JSON()) != string(d.JSON()) {
			t.Errorf("%s does not round-trip: %s then %s", tc.in, d.JSON(), again.JSON())
		}
	}
}

func docsEqual(a, b Document) bool {
	return equal(value{kind: kindObject, fields: a.fields}, value{kind: kindObject, fields: b.fields}) &&
		string(a.JSON()) == string(b.JSON())
}

// TestDocumentIntegersBeyond2e53AreRefusedNotRounded prevents a value
// changing silently: 2^53 + 1 read as float64 is 2^53, so an integer
// literal beyond ±2^53 is refused with an error that says what to send
// instead, while integers up to 2^53 stay exact and floats stay floats.
func TestDocumentIntegersBeyond2e53AreRefusedNotRounded(t *testing.T) {
	d := mustDoc(t, `{"a": 9007199254740992, "b": 123456789012345, "c": -17, "d": -9007199254740992}`)
	for key, want := range map[string]float64{"a": 9007199254740992, "b": 123456789012345, "c": -17, "d": -9007199254740992} {
		v, ok := findField(d.fields, key)
		if !ok || v.kind != kindNumber || v.num != want {
			t.Errorf("%s = %+v, want %v", key, v, want)
		}
	}
	for _, in := range []string{`{"a": 9007199254740993}`, `{"a": -9007199254740993}`, `{"a": 1180591620717411303424}`,
		`{"a": [1, 18446744073709551616]}`, `{"a": {"b": 9223372036854775807}}`} {
		_, err := ParseDocument([]byte(in))
		if !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), "beyond ±2^53") {
			t.Errorf("ParseDocument(%s) = %v, want a refusal naming 2^53", in, err)
		}
		if _, err := ParseDocuments([]byte("[" + in + "]")); !errors.Is(err, ErrInvalidDocument) {
			t.Errorf("ParseDocuments([%s]) = %v, want a refusal", in, err)
		}
		if _, err := ParseFilter([]byte(in)); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("ParseFilter(%s) = %v, want a refusal", in, err)
		}
	}
	if _, err := ParseNumber([]byte("9007199254740993")); !errors.Is(err, ErrInvalidFilter) {
		t.Errorf("ParseNumber(2^53+1) = %v, want a refusal", err)
	}
	neg := mustDoc(t, `{"z": -0}`)
	if v, _ := findField(neg.fields, "z"); !math.Signbit(v.num) {
		t.Errorf("-0 lost its sign: %v", v.num)
	}
}

// TestOldStoredIntegersBeyond2e53StillRead keeps data written before the
// exactness rule readable: a log record or snapshot holding the integer
// digits older versions wrote (rounded) reads as that float64, is written
// back in float form, and that form passes input parsing.
func TestOldStoredIntegersBeyond2e53StillRead(t *testing.T) {
	d, err := ReadDocument([]byte(`{"a":123456789012345680000,"b":9007199254740992}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(d.JSON()), `{"a":1.2345678901234568e+20,"b":9007199254740992}`; got != want {
		t.Fatalf("JSON() = %s, want %s", got, want)
	}
	if _, err := ParseDocument(d.JSON()); err != nil {
		t.Fatalf("the rewritten form is refused as input: %v", err)
	}
	x, err := Import([]uint64{1}, []uint64{0, 27}, []byte(`{"a":123456789012345680000}`))
	if err != nil {
		t.Fatalf("Import of an old snapshot: %v", err)
	}
	if got, _ := x.Get(1); string(got) != `{"a":1.2345678901234568e+20}` {
		t.Fatalf("imported document = %s", got)
	}
}

// TestZeroDocumentIsEmptyObject keeps "no metadata" and {} the same thing.
func TestZeroDocumentIsEmptyObject(t *testing.T) {
	var d Document
	if string(d.JSON()) != "{}" {
		t.Fatalf("zero Document JSON = %s", d.JSON())
	}
	if !docsEqual(d, mustDoc(t, `{}`)) {
		t.Fatal("zero Document differs from {}")
	}
}

// TestParseDocumentErrorsNameTheProblem checks every document rule and
// that each error names the offending key path or offset.
func TestParseDocumentErrorsNameTheProblem(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 32) + `1` + strings.Repeat(`}`, 32)
	tooDeep := strings.Repeat(`{"a":`, 32) + `[1]` + strings.Repeat(`}`, 32)
	for _, tc := range []struct{ in, want string }{
		{`[]`, `a document must be a JSON object, not a list`},
		{`null`, `a document must be a JSON object, not null`},
		{`"x"`, `not a string`},
		{`12`, `not a number`},
		{``, `not empty input`},
		{`{"a": {"b": [1, {"c.d": 2}]}}`, `key "c.d" in "a.b[1]": keys may not contain '.'`},
		{`{"a": [[1, {"$x": 1}]]}`, `key "$x" in "a[0][1]": keys may not start with '$'`},
		{`{"a": [{}, {"k": 1, "k": 2}], "b": [{"": 0}]}`, `key "k" in "a[1]": duplicate key`},
		{`{"a": {"": 1}}`, `key "" in "a": keys may not be empty`},
		{`{"a.b": 1}`, `key "a.b": keys may not contain '.'`},
		{`{"x": {"$gt": 1}}`, `key "$gt" in "x": keys may not start with '$'`},
		{`{"a": 1, "b": 2, "a": 3}`, `key "a": duplicate key`},
		{`{"o": {"k": 1, "k": 1}}`, `key "k" in "o": duplicate key`},
		{tooDeep, `nesting deeper than 32 levels`},
		{`{"a": 1e400}`, `offset 6: number 1e400 is out of the float64 range`},
		{`{"a": -1e400}`, `out of the float64 range`},
		{`{"a": 01}`, `offset 7: unexpected character '1', expected ',' or '}'`},
		{`{"a": 1.}`, `expected a digit after '.'`},
		{`{"a": .5}`, `offset 6: unexpected character '.', expected a value`},
		{`{"a": NaN}`, `unexpected character 'N', expected a value`},
		{`{"a": Infinity}`, `unexpected character 'I'`},
		{`{"a": tru}`, `invalid literal, expected true`},
		{`{"a": "x` + "\x00" + `"}`, `control character 0x00 in string`},
		{`{"a": "` + "\xff" + `"}`, `invalid UTF-8 in string`},
		{`{"a": "\q"}`, `invalid escape '\q' in string`},
		{`{"a": "\u12"}`, `invalid \u escape`},
		{`{"a": "x`, `unterminated string`},
		{`{"a" 1}`, `expected ':' after key "a"`},
		{`{"a": 1,}`, `expected a string key`},
		{`{"a": 1} x`, `unexpected character 'x' after the top-level value`},
		{`{"a": [1 2]}`, `expected ',' or ']'`},
		{`{a: 1}`, `expected a string key`},
	} {
		_, err := ParseDocument([]byte(tc.in))
		if err == nil {
			t.Errorf("ParseDocument(%.40s) accepted", tc.in)
			continue
		}
		if !errors.Is(err, ErrInvalidDocument) || !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("ParseDocument(%.40s): %v does not wrap ErrInvalidDocument and batch.ErrInvalid", tc.in, err)
		}
		if !strings.HasPrefix(err.Error(), "meta: invalid document: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDocument(%.40s) = %q, want it to contain %q", tc.in, err, tc.want)
		}
	}
	mustDoc(t, deep)
}

// TestParseDocumentSizeLimit prevents one document from holding megabytes
// of the collection's memory and snapshot.
func TestParseDocumentSizeLimit(t *testing.T) {
	pad := strings.Repeat("x", MaxDocumentBytes-len(`{"a":""}`))
	mustDoc(t, `{"a":"`+pad+`"}`)
	_, err := ParseDocument([]byte(`{"a":"` + pad + `x"}`))
	if !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), "more than the limit of 1048576") {
		t.Fatalf("oversized document: %v", err)
	}
	_, err = ParseDocuments([]byte(`[{}, {"a":"` + pad + `x"}]`))
	if !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), "metadata[1]: 1048577 bytes") {
		t.Fatalf("oversized document in a batch: %v", err)
	}
}

// TestParseDocumentsNamesTheEntry lets a caller of a batch insert find the
// bad document among thousands.
func TestParseDocumentsNamesTheEntry(t *testing.T) {
	docs, err := ParseDocuments([]byte(` [ {"a": 1}, null , {}, {"b": [true]} ] `))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"a":1}`, `{}`, `{}`, `{"b":[true]}`}
	if len(docs) != len(want) {
		t.Fatalf("got %d documents, want %d", len(docs), len(want))
	}
	for i := range want {
		if string(docs[i].JSON()) != want[i] {
			t.Errorf("docs[%d] = %s, want %s", i, docs[i].JSON(), want[i])
		}
	}
	if docs, err := ParseDocuments([]byte(`[]`)); err != nil || len(docs) != 0 {
		t.Errorf("ParseDocuments([]) = %v, %v", docs, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{}`, `metadata must be a JSON list of objects, found character '{'`},
		{`[{}, {}, {}, {"a": [{"b": [{"": 1}]}]}]`, `metadata[3]: key "" in "a[0].b[0]": keys may not be empty`},
		{`[{}, 5]`, `metadata[1]: a document must be a JSON object, not a number`},
		{`[{}, nul]`, `metadata[1]: offset 5: invalid literal, expected null`},
		{`[{} {}]`, `metadata[0]: offset 4: unexpected character '{', expected ',' or ']'`},
		{`[{}, {"a": 1, "a": 2}]`, `metadata[1]: key "a": duplicate key`},
		{`[{}] {}`, `unexpected character '{' after the list`},
		{`[{},`, `metadata[1]: a document must be a JSON object, not empty input`},
	} {
		_, err := ParseDocuments([]byte(tc.in))
		if !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDocuments(%s) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// TestLoneSurrogatesAreRefusedNotReplaced prevents text changing silently:
// "\ud800" is valid JSON but no character, and used to become U+FFFD. It
// is what a Python str with a lone surrogate encodes to.
func TestLoneSurrogatesAreRefusedNotReplaced(t *testing.T) {
	for _, in := range []string{`{"s": "\ud800x"}`, `{"s": "x\udc00"}`, `{"s": ["\ud83d"]}`, `{"\ud800": 1}`} {
		if _, err := ParseDocument([]byte(in)); !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), "surrogate") {
			t.Errorf("ParseDocument(%s) = %v, want a refusal naming the surrogate", in, err)
		}
		if _, err := ParseFilter([]byte(in)); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("ParseFilter(%s) = %v, want a refusal", in, err)
		}
	}
	if d := mustDoc(t, `{"s": "\ud83d\ude00"}`); string(d.JSON()) != `{"s":"😀"}` {
		t.Errorf("a surrogate pair reads as %s", d.JSON())
	}
	if d, err := ReadDocument([]byte(`{"s": "\ud800x"}`)); err != nil || string(d.JSON()) != "{\"s\":\"\ufffdx\"}" {
		t.Errorf("stored data: ReadDocument = %s, %v; want the old U+FFFD reading", d.JSON(), err)
	}
}

// TestCheckJSONTextFindsWhatEncodingJSONWouldReplace keeps the doors'
// body check exact: invalid UTF-8 and lone surrogate escapes are found,
// anywhere, while pairs, other escapes and an escaped backslash before
// "ud800" are not mistaken for them.
func TestCheckJSONTextFindsWhatEncodingJSONWouldReplace(t *testing.T) {
	for _, ok := range []string{`{}`, `{"a":"\ud83d\ude00"}`, `{"\\ud800":1}`, `{"a":"\\\ud83d\ude00"}`, `{"a":"\n\u00e9"}`, "{\"é\":\"😀\"}", `"\`} {
		if err := CheckJSONText([]byte(ok)); err != nil {
			t.Errorf("CheckJSONText(%s) = %v", ok, err)
		}
	}
	for _, bad := range []string{"{\"a\":\"\xff\"}", "\xc3", `{"a":"\ud800"}`, `{"\udc00":1}`, `["\ud83d\u0041"]`, `["\\\ud800"]`, `"\ud83d`} {
		if err := CheckJSONText([]byte(bad)); !errors.Is(err, ErrInvalidDocument) {
			t.Errorf("CheckJSONText(%q) = %v, want a refusal", bad, err)
		}
	}
}
