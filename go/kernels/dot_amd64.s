//go:build amd64 && !noasm

#include "textflag.h"

// Register use in the float32 kernels:
//   SI, DI  a and b cursors      CX  elements left
//   Y0-Y3 / Z0-Z3  the four accumulators, summed only at the end
//   Y4-Y7 / Z4-Z7  loaded operands

// tailMask<> is eight all-ones dwords followed by eight zero dwords: the 32
// bytes at tailMask<>+32-4*r enable exactly the first r of eight lanes.
DATA tailMask<>+0x00(SB)/8, $0xffffffffffffffff
DATA tailMask<>+0x08(SB)/8, $0xffffffffffffffff
DATA tailMask<>+0x10(SB)/8, $0xffffffffffffffff
DATA tailMask<>+0x18(SB)/8, $0xffffffffffffffff
DATA tailMask<>+0x20(SB)/8, $0
DATA tailMask<>+0x28(SB)/8, $0
DATA tailMask<>+0x30(SB)/8, $0
DATA tailMask<>+0x38(SB)/8, $0
GLOBL tailMask<>(SB), RODATA|NOPTR, $64

// HSUM_Y0 adds Y0-Y3 and leaves the sum of all 32 lanes in the low lane
// of X0. Clobbers Y1-Y3.
#define HSUM_Y0 \
	VADDPS       Y1, Y0, Y0 \
	VADDPS       Y3, Y2, Y2 \
	VADDPS       Y2, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VPERMILPS    $0x0e, X0, X1 \
	VADDPS       X1, X0, X0 \
	VPERMILPS    $0x01, X0, X1 \
	VADDSS       X1, X0, X0

// The dispatch stubs branch on the flags set by dispatch_amd64.go and
// tail-jump, so the chosen body (or the ABI0 wrapper of the Go fallback)
// finds its arguments exactly where the caller put them.

// func dot(a, b []float32) float32
TEXT ·dot(SB), NOSPLIT, $0-52
	CMPB ·useAVX512(SB), $0
	JNE  avx512
	CMPB ·useAVX2(SB), $0
	JNE  avx2
	JMP  ·dotGeneric(SB)

avx512:
	JMP ·dotAVX512(SB)

avx2:
	JMP ·dotAVX2(SB)

// func l2(a, b []float32) float32
TEXT ·l2(SB), NOSPLIT, $0-52
	CMPB ·useAVX512(SB), $0
	JNE  avx512
	CMPB ·useAVX2(SB), $0
	JNE  avx2
	JMP  ·l2Generic(SB)

avx512:
	JMP ·l2AVX512(SB)

avx2:
	JMP ·l2AVX2(SB)

// func dotAVX2(a, b []float32) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JB     blocks

loop:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JAE         loop

blocks:
	// At most three whole 8-lane blocks remain; give each its own
	// accumulator so they do not wait on one another.
	CMPQ        CX, $8
	JB          tail
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y1
	CMPQ        CX, $16
	JB          tail8
	VMOVUPS     32(SI), Y5
	VFMADD231PS 32(DI), Y5, Y2
	CMPQ        CX, $24
	JB          tail16
	VMOVUPS     64(SI), Y6
	VFMADD231PS 64(DI), Y6, Y3
	ADDQ        $96, SI
	ADDQ        $96, DI
	SUBQ        $24, CX
	JMP         tail

tail16:
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  tail

tail8:
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX

tail:
	// 0..7 elements left: masked loads read only the enabled lanes.
	TESTQ       CX, CX
	JE          reduce
	LEAQ        tailMask<>+32(SB), AX
	SHLQ        $2, CX
	SUBQ        CX, AX
	VMOVDQU     (AX), Y8
	VMASKMOVPS  (SI), Y8, Y4
	VMASKMOVPS  (DI), Y8, Y5
	VFMADD231PS Y5, Y4, Y0

reduce:
	HSUM_Y0
	VMOVSS     X0, ret+48(FP)
	VZEROUPPER
	RET

// func l2AVX2(a, b []float32) float32
TEXT ·l2AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JB     blocks

loop:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VSUBPS      (DI), Y4, Y4
	VSUBPS      32(DI), Y5, Y5
	VSUBPS      64(DI), Y6, Y6
	VSUBPS      96(DI), Y7, Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JAE         loop

blocks:
	CMPQ        CX, $8
	JB          tail
	VMOVUPS     (SI), Y4
	VSUBPS      (DI), Y4, Y4
	VFMADD231PS Y4, Y4, Y1
	CMPQ        CX, $16
	JB          tail8
	VMOVUPS     32(SI), Y5
	VSUBPS      32(DI), Y5, Y5
	VFMADD231PS Y5, Y5, Y2
	CMPQ        CX, $24
	JB          tail16
	VMOVUPS     64(SI), Y6
	VSUBPS      64(DI), Y6, Y6
	VFMADD231PS Y6, Y6, Y3
	ADDQ        $96, SI
	ADDQ        $96, DI
	SUBQ        $24, CX
	JMP         tail

tail16:
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  tail

tail8:
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX

tail:
	TESTQ       CX, CX
	JE          reduce
	LEAQ        tailMask<>+32(SB), AX
	SHLQ        $2, CX
	SUBQ        CX, AX
	VMOVDQU     (AX), Y8
	VMASKMOVPS  (SI), Y8, Y4
	VMASKMOVPS  (DI), Y8, Y5
	VSUBPS      Y5, Y4, Y4
	VFMADD231PS Y4, Y4, Y0

reduce:
	HSUM_Y0
	VMOVSS     X0, ret+48(FP)
	VZEROUPPER
	RET

// HSUM_Z0 adds Z0-Z3 and leaves the sum of all 64 lanes in the low lane
// of X0. Clobbers Z1-Z3.
#define HSUM_Z0 \
	VADDPS        Z1, Z0, Z0 \
	VADDPS        Z3, Z2, Z2 \
	VADDPS        Z2, Z0, Z0 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS        Y1, Y0, Y0 \
	VEXTRACTF128  $1, Y0, X1 \
	VADDPS        X1, X0, X0 \
	VPERMILPS     $0x0e, X0, X1 \
	VADDPS        X1, X0, X0 \
	VPERMILPS     $0x01, X0, X1 \
	VADDSS        X1, X0, X0

// func dotAVX512(a, b []float32) float32
TEXT ·dotAVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   CX, $64
	JB     blocks

loop:
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS (DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	CMPQ        CX, $64
	JAE         loop

blocks:
	// At most three whole 16-lane blocks remain.
	CMPQ        CX, $16
	JB          tail
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z1
	CMPQ        CX, $32
	JB          tail16
	VMOVUPS     64(SI), Z5
	VFMADD231PS 64(DI), Z5, Z2
	CMPQ        CX, $48
	JB          tail32
	VMOVUPS     128(SI), Z6
	VFMADD231PS 128(DI), Z6, Z3
	ADDQ        $192, SI
	ADDQ        $192, DI
	SUBQ        $48, CX
	JMP         tail

tail32:
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  tail

tail16:
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX

tail:
	// 0..15 elements left: a zero-masking load neither reads nor faults on
	// the disabled lanes.
	TESTQ       CX, CX
	JE          reduce
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VFMADD231PS Z5, Z4, Z0

reduce:
	HSUM_Z0
	VMOVSS     X0, ret+48(FP)
	VZEROUPPER
	RET

// func l2AVX512(a, b []float32) float32
TEXT ·l2AVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   CX, $64
	JB     blocks

loop:
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VSUBPS      (DI), Z4, Z4
	VSUBPS      64(DI), Z5, Z5
	VSUBPS      128(DI), Z6, Z6
	VSUBPS      192(DI), Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	CMPQ        CX, $64
	JAE         loop

blocks:
	CMPQ        CX, $16
	JB          tail
	VMOVUPS     (SI), Z4
	VSUBPS      (DI), Z4, Z4
	VFMADD231PS Z4, Z4, Z1
	CMPQ        CX, $32
	JB          tail16
	VMOVUPS     64(SI), Z5
	VSUBPS      64(DI), Z5, Z5
	VFMADD231PS Z5, Z5, Z2
	CMPQ        CX, $48
	JB          tail32
	VMOVUPS     128(SI), Z6
	VSUBPS      128(DI), Z6, Z6
	VFMADD231PS Z6, Z6, Z3
	ADDQ        $192, SI
	ADDQ        $192, DI
	SUBQ        $48, CX
	JMP         tail

tail32:
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  tail

tail16:
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX

tail:
	TESTQ       CX, CX
	JE          reduce
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VSUBPS      Z5, Z4, Z4
	VFMADD231PS Z4, Z4, Z0

reduce:
	HSUM_Z0
	VMOVSS     X0, ret+48(FP)
	VZEROUPPER
	RET
