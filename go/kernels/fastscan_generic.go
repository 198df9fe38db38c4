//go:build !amd64 || noasm

package kernels

func fastScan32(lut, block []uint8, pairs int, out *[32]uint32) {
	fastScan32Generic(lut, block, pairs, out)
}
