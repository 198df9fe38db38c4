//go:build !unix

package indexfile

import "errors"

// errNoMmap makes Read fall back to reading mapped sections into memory.
var errNoMmap = errors.New("indexfile: mmap not supported")

func mapRange(fd uintptr, off, length uint64) (mapping, data []byte, err error) {
	return nil, nil, errNoMmap
}

func unmap(m []byte) error { return nil }

func dontNeed(m []byte) {}

func randomAccess(m []byte) {}
