//go:build !linux

package vfs

func datasync(f File) error { return f.Sync() }
