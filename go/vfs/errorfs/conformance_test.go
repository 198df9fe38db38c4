package errorfs

import (
	"testing"

	"github.com/strata-db/strata/go/vfs"
	"github.com/strata-db/strata/go/vfs/internal/vfstest"
)

// TestConformance checks that the zero Rule passes every operation through
// unchanged.
func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T) (vfs.FS, string) { return New(vfs.Default, Rule{}), t.TempDir() })
}
