package sq8

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randRows(n, dim int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 2))
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64()) * float32(1+i%dim%3)
	}
	return v
}

// TestCodeDistancesMatchDecodedVectors checks the algebra of the package
// doc: integer distances between codes equal float distances between the
// decoded vectors.
func TestCodeDistancesMatchDecodedVectors(t *testing.T) {
	const dim = 37
	data := randRows(200, dim, 1)
	q, err := Train(data, dim)
	if err != nil {
		t.Fatal(err)
	}
	codes := make([]uint8, 200*dim)
	shares := make([]float32, 200)
	dec := make([]float32, 200*dim)
	for i := 0; i < 200; i++ {
		shares[i] = q.Encode(data[i*dim:(i+1)*dim], codes[i*dim:(i+1)*dim])
		q.Decode(codes[i*dim:(i+1)*dim], dec[i*dim:(i+1)*dim])
	}
	for i := 0; i < 50; i++ {
		for j := 100; j < 150; j++ {
			a, b := dec[i*dim:(i+1)*dim], dec[j*dim:(j+1)*dim]
			var l2, dot float64
			for d := range a {
				l2 += float64(a[d]-b[d]) * float64(a[d]-b[d])
				dot += float64(a[d]) * float64(b[d])
			}
			gotL2 := q.L2(codes[i*dim:(i+1)*dim], codes[j*dim:(j+1)*dim])
			gotDot := q.Dot(codes[i*dim:(i+1)*dim], shares[i], codes[j*dim:(j+1)*dim], shares[j])
			if math.Abs(float64(gotL2)-l2) > 1e-4*(1+l2) {
				t.Fatalf("L2 of codes %v, decoded %v", gotL2, l2)
			}
			if math.Abs(float64(gotDot)-dot) > 1e-3*(1+math.Abs(dot)) {
				t.Fatalf("Dot of codes %v, decoded %v", gotDot, dot)
			}
		}
	}
	// Reconstruction error is at most half a step per dimension.
	for i, v := range data {
		if math.Abs(float64(v-dec[i])) > float64(q.Step)/2*1.001 {
			t.Fatalf("value %v decoded as %v (step %v)", v, dec[i], q.Step)
		}
	}
}

func TestEncodeClampsOutOfRange(t *testing.T) {
	q, err := Train([]float32{0, 0, 1, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	code := make([]uint8, 2)
	q.Encode([]float32{-5, 9}, code)
	if code[0] != 0 || code[1] != 255 {
		t.Fatalf("code %v, want [0 255]", code)
	}
}

func TestTrainRejectsBadSample(t *testing.T) {
	if _, err := Train([]float32{1, 2, 3}, 2); err == nil {
		t.Fatal("partial row accepted")
	}
	if _, err := Train(nil, 2); err == nil {
		t.Fatal("empty sample accepted")
	}
	q, _ := Train([]float32{1, 1, 1, 1}, 2)
	if err := q.Validate(2); err != nil {
		t.Fatalf("constant sample gives an unusable quantizer: %v", err)
	}
}
