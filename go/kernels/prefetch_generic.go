//go:build !amd64 || noasm

package kernels

import "unsafe"

// PrefetchRows is a no-op without assembly; see the amd64 version.
func PrefetchRows(base unsafe.Pointer, stride uintptr, rows []uint32, lines int) {}
