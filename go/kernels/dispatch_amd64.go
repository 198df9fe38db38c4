//go:build amd64 && !noasm

package kernels

import "github.com/klauspost/cpuid/v2"

// The flags below are read by the assembly dispatch stubs (dot, l2, dotU8,
// l2U8 in *_amd64.s) on every call. They are written only at init and by
// setPath in tests, never while kernels run.
var (
	useAVX2   bool // float32: AVX2 + FMA3
	useAVX512 bool // float32: AVX-512F

	useU8AVX2   bool // SQ8: AVX2
	useU8AVX512 bool // SQ8: AVX-512F + BW + VNNI
)

// Best paths this CPU supports (cpuid also checks that the OS saves the
// YMM/ZMM/opmask state, so a feature reported here is usable).
var (
	bestFloat = detectFloat()
	bestU8    = detectU8()
)

func detectFloat() path {
	switch {
	case cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.AVX512F):
		return pathAVX512
	case cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3):
		return pathAVX2
	}
	return pathGeneric
}

func detectU8() path {
	switch {
	case cpuid.CPU.Supports(cpuid.AVX2, cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VNNI):
		return pathAVX512
	case cpuid.CPU.Supports(cpuid.AVX2):
		return pathAVX2
	}
	return pathGeneric
}

func init() { setPath(pathAVX512) }

// setPath caps both kernel families at limit (never above what the CPU
// supports) and returns a function restoring the previous state. Tests use it
// to run every path on one machine; it must not race with running kernels.
func setPath(limit path) (restore func()) {
	saved := [4]bool{useAVX2, useAVX512, useU8AVX2, useU8AVX512}
	f, u := min(limit, bestFloat), min(limit, bestU8)
	useAVX2, useAVX512 = f == pathAVX2, f == pathAVX512
	useU8AVX2, useU8AVX512 = u == pathAVX2, u == pathAVX512
	return func() { useAVX2, useAVX512, useU8AVX2, useU8AVX512 = saved[0], saved[1], saved[2], saved[3] }
}

func floatPath() path { return flagsPath(useAVX2, useAVX512) }
func u8Path() path    { return flagsPath(useU8AVX2, useU8AVX512) }

func flagsPath(avx2, avx512 bool) path {
	switch {
	case avx512:
		return pathAVX512
	case avx2:
		return pathAVX2
	}
	return pathGeneric
}

// detectedPaths lists the paths this build and CPU can run, slowest first.
func detectedPaths() []path {
	paths := []path{pathGeneric}
	for p := pathAVX2; p <= max(bestFloat, bestU8); p++ {
		paths = append(paths, p)
	}
	return paths
}
