package vfs_test

import (
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/internal/vfstest"
)

func TestOSFSConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T) (vfs.FS, string) { return vfs.Default, t.TempDir() })
}
