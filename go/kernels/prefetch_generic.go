//go:build !amd64 || noasm

package kernels

// PrefetchRows is a no-op without assembly; see the amd64 version.
func PrefetchRows(base *float32, stride uintptr, rows []uint32, lines int) {}
