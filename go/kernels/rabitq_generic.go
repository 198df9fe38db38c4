//go:build !amd64 || noasm

package kernels

func bitDotU8Rows(q []uint8, words int, codes []uint64, stride int, ids []uint32, out []uint32) {
	bitDotU8RowsGeneric(q, words, codes, stride, ids, out)
}

func bitDotPath() path { return pathGeneric }

func useBitAVXFlag() bool    { return false }
func setBitAVX(bool)         {}
func useBitAVX512Flag() bool { return false }
func setBitAVX512(bool)      {}
