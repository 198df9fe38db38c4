package jsonnum

import (
	"encoding/json"
	"math"
	"math/rand/v2"
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
		got, end, ok := ShortFloat([]byte(text+","), 0)
		if !ok {
			declined++
			continue
		}
		if end != len(text) {
			t.Fatalf("%q: ended at %d, want %d", text, end, len(text))
		}
		if math.Float32bits(got) != math.Float32bits(float32(want)) {
			t.Fatalf("%q: ShortFloat %v (%#x), strconv %v (%#x)", text, got, math.Float32bits(got), float32(want), math.Float32bits(float32(want)))
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
		if f, _, ok := ShortFloat([]byte(text), 0); ok {
			t.Errorf("%q: fast path read %v, want it declined", text, f)
		}
	}
}

// TestFloat32sReadsAsEncodingJSON: every list the fast reader takes is
// read to the very float32s encoding/json gives, and it declines what is
// not a plain list of numbers.
func TestFloat32sReadsAsEncodingJSON(t *testing.T) {
	for _, text := range []string{`[]`, ` [ ] `, `[1]`, `[1,2.5,-3e2]`, " [\n0.1 ,\t-0 ] ", `[1e-50]`, `[3.4028235e38]`,
		`[0.12345678901234567]`, `[1,]`, `[,1]`, `[1 2]`, `[1]]`, `[1] x`, `[NaN]`, `[1e39]`, `[-1e39]`, `["1"]`,
		`[[1]]`, `{"": [1]}`, `null`, `[01]`, `[1.]`, `[.5]`, `[+1]`, `[1e]`, `[`, ``, `[1`} {
		check(t, []byte(text))
	}
}

func check(t *testing.T, data []byte) {
	t.Helper()
	got, ok := Float32s([]float32{7}, data)
	var want []float32
	err := json.Unmarshal(data, &want)
	if !ok {
		if len(got) != 1 || got[0] != 7 {
			t.Fatalf("%q: declined but changed dst to %v", data, got)
		}
		if err == nil && want != nil {
			t.Fatalf("%q: declined a list encoding/json reads as %v", data, want)
		}
		return
	}
	if err != nil {
		t.Fatalf("%q: read %v, encoding/json refuses it: %v", data, got[1:], err)
	}
	if len(got) != len(want)+1 {
		t.Fatalf("%q: read %v, encoding/json %v", data, got[1:], want)
	}
	for i, w := range want {
		if math.Float32bits(got[i+1]) != math.Float32bits(w) {
			t.Fatalf("%q[%d]: read %v, encoding/json %v", data, i, got[i+1], w)
		}
	}
}

// FuzzFloat32s: the fast reader agrees with encoding/json on every input
// (the Qdrant door falls back to encoding/json when it declines).
func FuzzFloat32s(f *testing.F) {
	for _, seed := range []string{`[1,2,3]`, `[0.5, -1e-3, 3.4e38]`, `[1e39]`, ` [ ]`, `[1,]`, `[0.1234567]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data)
	})
}
