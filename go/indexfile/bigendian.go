//go:build armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64

package indexfile

// Sections are viewed in the host's byte order and the format is
// little-endian, so building for a big-endian host is refused here.
var _ = indexfileNeedsALittleEndianHost
