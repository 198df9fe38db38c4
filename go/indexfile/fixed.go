package indexfile

import (
	"encoding/binary"
	"fmt"
)

// EncodeFixed encodes v, a struct (or pointer to one) whose fields are all
// fixed-size (uint32, float64, [8]byte, ... but not int, slices or
// strings), little-endian and without padding, for a parameters section.
func EncodeFixed(v any) ([]byte, error) {
	b, err := binary.Append(nil, binary.LittleEndian, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return b, nil
}

// DecodeFixed decodes b, written by EncodeFixed, into v, a pointer to the
// same struct type. A length other than the struct's size is ErrCorrupt: a
// struct that grows needs a new section tag or format version.
func DecodeFixed(b []byte, v any) error {
	size := binary.Size(v)
	if size < 0 {
		return fmt.Errorf("%w: %T is not a fixed-size struct", ErrInvalid, v)
	}
	if len(b) != size {
		return fmt.Errorf("%w: %d bytes of parameters, want %d for %T", ErrCorrupt, len(b), size, v)
	}
	if _, err := binary.Decode(b, binary.LittleEndian, v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}
