package memfs

import (
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/internal/vfstest"
)

func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T) (vfs.FS, string) {
		fs := New()
		if err := fs.MkdirAll("/tmp/test"); err != nil {
			t.Fatal(err)
		}
		return fs, "/tmp/test"
	})
}
