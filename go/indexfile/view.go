package indexfile

import (
	"fmt"
	"unsafe"
)

// Elem is an element type a section can hold.
type Elem interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~uint64 | ~int64 | ~float32 | ~float64
}

// BytesOf views s as bytes, without copying, for writing it as a section.
// The bytes are in the host's order, which this package requires to be
// little-endian.
func BytesOf[T Elem](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// ViewAs views b, typically a section, as a []T without copying. It fails
// with ErrInvalid if b's length is not a multiple of T's size or b is not
// aligned for T; sections from Read are aligned for every Elem. The view
// shares b's memory and lifetime (for a mapped section: until File.Close).
func ViewAs[T Elem](b []byte) ([]T, error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b)%size != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of %d-byte elements", ErrInvalid, len(b), size)
	}
	if len(b) == 0 {
		return []T{}, nil
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%unsafe.Alignof(zero) != 0 {
		return nil, fmt.Errorf("%w: address %p is not %d-byte aligned", ErrInvalid, p, unsafe.Alignof(zero))
	}
	return unsafe.Slice((*T)(p), len(b)/size), nil
}
