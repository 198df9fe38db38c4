package batch

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCheckAddRejectsBadBatches(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(-1))
	cases := []struct {
		name    string
		vectors []float32
		ids     []uint64
		out     []uint64
		want    string
	}{
		{"ragged", []float32{1, 2, 3}, nil, nil, "not a multiple"},
		{"nan", []float32{1, 2, 3, nan}, nil, nil, "vectors[1][1]"},
		{"inf", []float32{inf, 2}, nil, nil, "vectors[0][0]"},
		{"ids length", []float32{1, 2, 3, 4}, []uint64{1}, nil, "1 ids for 2 vectors"},
		{"out length", []float32{1, 2, 3, 4}, nil, make([]uint64, 3), "room for 3"},
		{"duplicate", []float32{1, 2, 3, 4, 5, 6}, []uint64{7, 8, 7}, nil, "duplicate id 7"},
		{"too large", []float32{1, 2}, []uint64{1 << 63}, nil, "exceeds"},
	}
	for _, c := range cases {
		_, err := CheckAdd(c.vectors, 2, c.ids, c.out)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrInvalid mentioning %q", c.name, err, c.want)
		}
	}
	if n, err := CheckAdd([]float32{1, 2, 3, 4}, 2, []uint64{0, MaxID}, make([]uint64, 2)); err != nil || n != 2 {
		t.Errorf("valid batch: n=%d err=%v", n, err)
	}
}

func TestCheckSearchRejectsBadArguments(t *testing.T) {
	q := []float32{1, 2}
	if _, err := CheckSearch(q, 2, 0, nil, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("k=0: %v", err)
	}
	if _, err := CheckSearch(q, 0, 1, nil, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("dim=0: %v", err)
	}
	if _, err := CheckSearch(q, 2, 2, make([]int64, 2), make([]float32, 1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("short output: %v", err)
	}
	if _, err := CheckSearch([]float32{float32(math.NaN()), 0}, 2, 1, make([]int64, 1), make([]float32, 1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("nan query: %v", err)
	}
	if nq, err := CheckSearch(nil, 2, 3, nil, nil); err != nil || nq != 0 {
		t.Errorf("no queries: nq=%d err=%v", nq, err)
	}
}
