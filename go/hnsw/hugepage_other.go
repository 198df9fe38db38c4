//go:build !linux

package hnsw

// adviseHugePages is a no-op where transparent huge pages do not exist.
func adviseHugePages[T any](s []T) {}
