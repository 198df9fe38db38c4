package indexfile

import "fmt"

// FourCC returns the tag whose bytes in the file spell s, which must be
// four ASCII characters; it panics otherwise, since tags are constants.
//
//	var tagVectors = indexfile.FourCC("VECS")
func FourCC(s string) uint32 {
	if len(s) != 4 {
		panic(fmt.Sprintf("indexfile: FourCC(%q): need 4 bytes", s))
	}
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// TagName is the four characters of tag if they are printable ASCII, and
// its hex value otherwise, for messages.
func TagName(tag uint32) string {
	b := [4]byte{byte(tag), byte(tag >> 8), byte(tag >> 16), byte(tag >> 24)}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("0x%08x", tag)
		}
	}
	return string(b[:])
}
