package indexfile

import (
	"errors"
	"testing"
)

func isInvalid(err error) bool { return errors.Is(err, ErrInvalid) }

func TestViewAsRejectsPartialElements(t *testing.T) {
	b := BytesOf(make([]uint64, 2))
	if _, err := ViewAs[float32](b[:7]); !isInvalid(err) {
		t.Fatalf("7 bytes as float32: got %v, want ErrInvalid", err)
	}
}

func TestViewAsRejectsMisalignedBytes(t *testing.T) {
	b := BytesOf(make([]uint64, 3))
	if _, err := ViewAs[uint32](b[1:9]); !isInvalid(err) {
		t.Fatalf("misaligned uint32 view: got %v, want ErrInvalid", err)
	}
	if _, err := ViewAs[uint64](b[4:12]); !isInvalid(err) {
		t.Fatalf("4-aligned uint64 view: got %v, want ErrInvalid", err)
	}
}

func TestBytesOfAndViewAsRoundTrip(t *testing.T) {
	in := []float32{1.5, -2, 3.25}
	b := BytesOf(in)
	if len(b) != 12 || le.Uint32(b[4:]) != 0xc0000000 {
		t.Fatalf("BytesOf(%v) = % x: not little-endian float32", in, b)
	}
	out, err := ViewAs[float32](b)
	if err != nil || len(out) != 3 || out[2] != 3.25 {
		t.Fatalf("ViewAs: %v, %v", out, err)
	}
	if empty, err := ViewAs[uint32](nil); err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("ViewAs(nil) = %v, %v; want an empty non-nil slice", empty, err)
	}
	if BytesOf([]uint32(nil)) != nil {
		t.Fatal("BytesOf(nil) is not nil")
	}
}

func TestFourCCSpellsTagInFile(t *testing.T) {
	tag := FourCC("VECS")
	var b [4]byte
	le.PutUint32(b[:], tag)
	if string(b[:]) != "VECS" || TagName(tag) != "VECS" {
		t.Fatalf("FourCC(VECS) = %#x, bytes %q, name %q", tag, b, TagName(tag))
	}
	if TagName(0x00010203) != "0x00010203" {
		t.Fatalf("unprintable tag named %q", TagName(0x00010203))
	}
}

type testParams struct {
	Dim      uint32
	M        uint16
	Metric   uint8
	_        uint8
	EfBuild  uint32
	LevelMul float64
}

func TestFixedParamsRoundTrip(t *testing.T) {
	in := testParams{Dim: 128, M: 16, Metric: 2, EfBuild: 200, LevelMul: 0.36}
	b, err := EncodeFixed(&in)
	if err != nil || len(b) != 20 {
		t.Fatalf("EncodeFixed: %d bytes, %v", len(b), err)
	}
	var out testParams
	if err := DecodeFixed(b, &out); err != nil || out != in {
		t.Fatalf("DecodeFixed: %+v, %v", out, err)
	}
	if err := DecodeFixed(b[:19], &out); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short parameters: got %v, want ErrCorrupt", err)
	}
	if err := DecodeFixed(append(b, 0), &out); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("long parameters: got %v, want ErrCorrupt", err)
	}
	if _, err := EncodeFixed(struct{ N int }{1}); !isInvalid(err) {
		t.Fatalf("struct with int: got %v, want ErrInvalid", err)
	}
}
