package server

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestShortFloatRoundsLikeStrconv: the short-decimal fast path returns
// the very float32 strconv.ParseFloat(s, 32) returns, or declines; a
// wrong rounding there would change every vector a client sends.
func TestShortFloatRoundsLikeStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var texts []string
	for range 200_000 {
		v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(16)-8))
		switch rng.IntN(3) {
		case 0:
			texts = append(texts, strconv.FormatFloat(v, 'g', 1+rng.IntN(9), 32))
		case 1:
			texts = append(texts, strconv.FormatFloat(v, 'f', rng.IntN(12), 64))
		default:
			texts = append(texts, strconv.FormatFloat(v, 'f', -1, 32))
		}
	}
	// Around the edges: the largest mantissa taken, ties, ten fraction
	// digits and eleven, zeros and signs.
	texts = append(texts, "8388607", "8388608", "838860.7", "838860.8", "0.8388607", "0.0000000001",
		"0.00000000001", "1.0000001", "16777217", "0.1", "-0", "-0.0", "0", "0.0000000000", "4.5",
		"0.33554433", "3.3554433", "-838859.9")
	declined := 0
	for _, text := range texts {
		want, err := strconv.ParseFloat(text, 32)
		if err != nil {
			t.Fatalf("bad test input %q: %v", text, err)
		}
		got, end, ok := shortFloat([]byte(text+","), 0)
		if !ok {
			declined++
			continue
		}
		if end != len(text) {
			t.Fatalf("%q: ended at %d, want %d", text, end, len(text))
		}
		if math.Float32bits(got) != math.Float32bits(float32(want)) {
			t.Fatalf("%q: shortFloat %v (%#x), strconv %v (%#x)", text, got, math.Float32bits(got), float32(want), math.Float32bits(float32(want)))
		}
	}
	if declined > len(texts)*3/4 {
		t.Errorf("the fast path declined %d of %d numbers: it is not being exercised", declined, len(texts))
	}
}

// TestShortFloatDeclinesWhatItCannotRead: malformed and long numbers go to
// the full reader (which names the error), never through the fast path.
func TestShortFloatDeclinesWhatItCannotRead(t *testing.T) {
	for _, text := range []string{"", "-", "01", "-01", "1.", "1e5", "1E5", "1.5e1", ".5", "+1", "1.2.3",
		"8388608", "123456789", "0.12345678901", "NaN", "Infinity", "\"1\""} {
		if f, _, ok := shortFloat([]byte(text), 0); ok {
			t.Errorf("%q: fast path read %v, want it declined", text, f)
		}
	}
}

// TestIncludeListsReadAsEncodingJSONReadsThem: the reflection-free reader
// of "include" lists gives encoding/json's answer, or leaves the list to it.
func TestIncludeListsReadAsEncodingJSONReadsThem(t *testing.T) {
	for _, text := range []string{`["distances"]`, ` [ "metadata" , "vectors" ] `, `[]`, `["x"]`,
		`["a\"b"]`, `["é"]`, `null`, `["x",]`, `["x"`, `[1]`, `"x"`, `["x"] 1`, `["\u0041"]`} {
		got, err := decodeStrings(nil, "include", []byte(text))
		var want []string
		wantErr := json.Unmarshal([]byte(text), &want)
		if (err != nil) != (wantErr != nil) || err == nil && (!slices.Equal(got, want) || (got == nil) != (want == nil)) {
			t.Errorf("%s: got %q, %v; encoding/json %q, %v", text, got, err, want, wantErr)
		}
	}
}
