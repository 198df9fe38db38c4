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

// TestLongFloatRoundsLikeStrconv: the long-decimal path returns the very
// float32 strconv.ParseFloat(s, 32) returns, or declines: float32 values
// widened and written in full (the Python clients' text), decimals of 10
// to 19 digits with exponents, and numbers next to float32 midpoints,
// where rounding twice (to float64, then to float32) would go wrong.
func TestLongFloatRoundsLikeStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var widened, others []string
	for range 200_000 {
		v := float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(36)-18)))
		widened = append(widened, strconv.FormatFloat(float64(v), 'g', -1, 64))
		w := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(80)-40))
		others = append(others, strconv.FormatFloat(w, 'e', 9+rng.IntN(10), 64),
			strconv.FormatFloat(w, 'f', rng.IntN(20), 64))
		// a float32 midpoint, exactly and a hair either side
		m := float32(rng.NormFloat64())
		mid := (float64(m) + float64(math.Nextafter32(m, float32(math.Inf(1))))) / 2
		for _, x := range []float64{mid, math.Nextafter(mid, 0), math.Nextafter(mid, 2*mid)} {
			others = append(others, strconv.FormatFloat(x, 'e', 18, 64), strconv.FormatFloat(x, 'g', -1, 64))
		}
	}
	others = append(others, "0.30000001192092896", "-0.0", "0", "-0", "0e999", "1e-44", "3.4028235e38",
		"3.4028236e38", "1.1754944e-38", "1.17549435e-38", "9999999999999999999", "1e22", "1e23", "1e44",
		"1.2345678901234567890e10")
	for name, texts := range map[string][]string{"widened float32s": widened, "other decimals": others} {
		read := 0
		for _, text := range texts {
			want, err := strconv.ParseFloat(text, 32)
			got, end, ok := LongFloat([]byte(text+","), 0)
			if !ok {
				continue
			}
			read++
			if err != nil {
				t.Fatalf("%q: LongFloat read %v, strconv refuses it: %v", text, got, err)
			}
			if end != len(text) {
				t.Fatalf("%q: ended at %d, want %d", text, end, len(text))
			}
			if math.Float32bits(got) != math.Float32bits(float32(want)) {
				t.Fatalf("%q: LongFloat %v (%#x), strconv %v (%#x)", text, got, math.Float32bits(got), float32(want), math.Float32bits(float32(want)))
			}
		}
		if name == "widened float32s" && read < len(texts)*99/100 {
			t.Errorf("%s: read %d of %d: the path is not being exercised", name, read, len(texts))
		}
		t.Logf("%s: read %d of %d", name, read, len(texts))
	}
}

// TestLongFloatDeclinesWhatItCannotRead: malformed numbers, more than 19
// significant digits, far exponents and float32's edges go to strconv.
func TestLongFloatDeclinesWhatItCannotRead(t *testing.T) {
	for _, text := range []string{"", "-", "01", "-01", "1.", "1e", "1e+", ".5", "+1", "NaN", "Infinity", "\"1\"",
		"12345678901234567890", "0.12345678901234567890", "1e45", "1e-45", "1e39", "1e-39", "1e1001"} {
		if f, _, ok := LongFloat([]byte(text), 0); ok {
			t.Errorf("%q: long path read %v, want it declined", text, f)
		}
	}
}

// FuzzLongFloat: whatever the long-decimal path reads, it reads as
// strconv.ParseFloat(s, 32) does, and ends where Number ends.
func FuzzLongFloat(f *testing.F) {
	for _, seed := range []string{"0.30000001192092896", "-1.0000000116860974e-07", "1e22", "0.5e-44", "7"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, end, ok := LongFloat(data, 0)
		if !ok {
			return
		}
		numEnd, _, fault := Number(data, 0)
		if fault != OK || numEnd != end {
			t.Fatalf("%q: LongFloat ended at %d, Number at %d (%v)", data, end, numEnd, fault)
		}
		want, err := strconv.ParseFloat(string(data[:end]), 32)
		if err != nil || math.Float32bits(got) != math.Float32bits(float32(want)) {
			t.Fatalf("%q: LongFloat %v, strconv %v (%v)", data[:end], got, float32(want), err)
		}
	})
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

// BenchmarkVector128 reads one 128-number vector as the Python clients
// write it (float32 values widened, 16-17 digits), through Float32s and
// through what Float32 did before LongFloat (Number, then strconv).
//
//	bench/go_bench_ab.py --pkg ./go/internal/jsonnum --bench 'Vector128/(float32s|strconv)$'
func BenchmarkVector128(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	text := []byte{'['}
	for j := range 128 {
		if j > 0 {
			text = append(text, ',')
		}
		text = strconv.AppendFloat(text, float64(float32(rng.NormFloat64())), 'g', -1, 64)
	}
	text = append(text, ']')
	dst := make([]float32, 0, 128)
	b.Run("float32s", func(b *testing.B) {
		for b.Loop() {
			var ok bool
			if dst, ok = Float32s(dst[:0], text); !ok || len(dst) != 128 {
				b.Fatal("not read")
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			dst = dst[:0]
			for i := 1; i < len(text); {
				end, _, fault := Number(text, i)
				if fault != OK {
					b.Fatal("not a number")
				}
				x, err := strconv.ParseFloat(string(text[i:end]), 32)
				if err != nil {
					b.Fatal(err)
				}
				dst, i = append(dst, float32(x)), end+1
			}
		}
	})
}
