//go:build amd64 && !noasm

#include "textflag.h"

// All sums are kept in 32-bit lanes and wrap modulo 2^32 like the generic
// uint32 loops, so the results are bit-identical for every length.
//
// Register use: SI, DI  a and b cursors; CX  bytes left;
// Y0-Y1 / Z0-Z3  accumulators; Y8 / Z8-Z9  constants.

// HSUMD_Y0 leaves the sum of the eight dwords of Y0 in AX. Clobbers Y1.
#define HSUMD_Y0 \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDD       X1, X0, X0 \
	VPSHUFD      $0x0e, X0, X1 \
	VPADDD       X1, X0, X0 \
	VPSHUFD      $0x01, X0, X1 \
	VPADDD       X1, X0, X0 \
	VMOVD        X0, AX

// func dotU8(a, b []uint8) uint32
TEXT ·dotU8(SB), NOSPLIT, $0-52
	CMPB ·useU8AVX512(SB), $0
	JNE  avx512
	CMPB ·useU8AVX2(SB), $0
	JNE  avx2
	JMP  ·dotU8Generic(SB)

avx512:
	JMP ·dotU8AVX512(SB)

avx2:
	JMP ·dotU8AVX2(SB)

// func l2U8(a, b []uint8) uint32
TEXT ·l2U8(SB), NOSPLIT, $0-52
	CMPB ·useU8AVX512(SB), $0
	JNE  avx512
	CMPB ·useU8AVX2(SB), $0
	JNE  avx2
	JMP  ·l2U8Generic(SB)

avx512:
	JMP ·l2U8AVX512(SB)

avx2:
	JMP ·l2U8AVX2(SB)

// func dotU8AVX2(a, b []uint8) uint32
TEXT ·dotU8AVX2(SB), NOSPLIT, $0-52
	MOVQ         a_base+0(FP), SI
	MOVQ         b_base+24(FP), DI
	MOVQ         a_len+8(FP), CX
	MOVL         $0x00ff00ff, AX
	VMOVD        AX, X8
	VPBROADCASTD X8, Y8                 // low byte of every word
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1
	CMPQ         CX, $32
	JB           half

loop:
	// Each word holds an even byte (low) and an odd byte (high); split
	// them into two zero-extended word vectors and multiply-add pairs.
	VMOVDQU  (SI), Y4
	VMOVDQU  (DI), Y5
	VPSRLW   $8, Y4, Y6
	VPSRLW   $8, Y5, Y7
	VPAND    Y8, Y4, Y4
	VPAND    Y8, Y5, Y5
	VPMADDWD Y5, Y4, Y4
	VPMADDWD Y7, Y6, Y6
	VPADDD   Y4, Y0, Y0
	VPADDD   Y6, Y1, Y1
	ADDQ     $32, SI
	ADDQ     $32, DI
	SUBQ     $32, CX
	CMPQ     CX, $32
	JAE      loop

half:
	// VEX.128 results have zero upper halves, so they add into Y0/Y1.
	CMPQ     CX, $16
	JB       reduce
	VMOVDQU  (SI), X4
	VMOVDQU  (DI), X5
	VPSRLW   $8, X4, X6
	VPSRLW   $8, X5, X7
	VPAND    X8, X4, X4
	VPAND    X8, X5, X5
	VPMADDWD X5, X4, X4
	VPMADDWD X7, X6, X6
	VPADDD   Y4, Y0, Y0
	VPADDD   Y6, Y1, Y1
	ADDQ     $16, SI
	ADDQ     $16, DI
	SUBQ     $16, CX

reduce:
	VPADDD Y1, Y0, Y0
	HSUMD_Y0

scalar:
	// 0..15 bytes left.
	TESTQ  CX, CX
	JE     done
	MOVBLZX (SI), DX
	MOVBLZX (DI), BX
	IMULL  BX, DX
	ADDL   DX, AX
	INCQ   SI
	INCQ   DI
	DECQ   CX
	JMP    scalar

done:
	MOVL       AX, ret+48(FP)
	VZEROUPPER
	RET

// func l2U8AVX2(a, b []uint8) uint32
TEXT ·l2U8AVX2(SB), NOSPLIT, $0-52
	MOVQ         a_base+0(FP), SI
	MOVQ         b_base+24(FP), DI
	MOVQ         a_len+8(FP), CX
	MOVL         $0x00ff00ff, AX
	VMOVD        AX, X8
	VPBROADCASTD X8, Y8
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1
	CMPQ         CX, $32
	JB           half

loop:
	// |a-b| = max(a,b) - min(a,b) fits a byte; square it as in dotU8AVX2.
	VMOVDQU  (SI), Y4
	VMOVDQU  (DI), Y5
	VPMAXUB  Y5, Y4, Y6
	VPMINUB  Y5, Y4, Y4
	VPSUBB   Y4, Y6, Y4
	VPSRLW   $8, Y4, Y5
	VPAND    Y8, Y4, Y4
	VPMADDWD Y4, Y4, Y4
	VPMADDWD Y5, Y5, Y5
	VPADDD   Y4, Y0, Y0
	VPADDD   Y5, Y1, Y1
	ADDQ     $32, SI
	ADDQ     $32, DI
	SUBQ     $32, CX
	CMPQ     CX, $32
	JAE      loop

half:
	CMPQ     CX, $16
	JB       reduce
	VMOVDQU  (SI), X4
	VMOVDQU  (DI), X5
	VPMAXUB  X5, X4, X6
	VPMINUB  X5, X4, X4
	VPSUBB   X4, X6, X4
	VPSRLW   $8, X4, X5
	VPAND    X8, X4, X4
	VPMADDWD X4, X4, X4
	VPMADDWD X5, X5, X5
	VPADDD   Y4, Y0, Y0
	VPADDD   Y5, Y1, Y1
	ADDQ     $16, SI
	ADDQ     $16, DI
	SUBQ     $16, CX

reduce:
	VPADDD Y1, Y0, Y0
	HSUMD_Y0

scalar:
	TESTQ   CX, CX
	JE      done
	MOVBLZX (SI), DX
	MOVBLZX (DI), BX
	SUBL    BX, DX
	IMULL   DX, DX
	ADDL    DX, AX
	INCQ    SI
	INCQ    DI
	DECQ    CX
	JMP     scalar

done:
	MOVL       AX, ret+48(FP)
	VZEROUPPER
	RET

// HSUMD_Z0 adds Z0-Z3 as Σ·(x-128) partials (Z0, Z1) and Σx partials (Z2,
// Z3), applies the 128·Σx correction and leaves the total in AX.
// Clobbers Z1-Z3.
#define HSUMD_Z0 \
	VPADDD        Z1, Z0, Z0 \
	VPADDD        Z3, Z2, Z2 \
	VPSLLD        $7, Z2, Z2 \
	VPADDD        Z2, Z0, Z0 \
	VEXTRACTI64X4 $1, Z0, Y1 \
	VPADDD        Y1, Y0, Y0 \
	HSUMD_Y0

// func dotU8AVX512(a, b []uint8) uint32
TEXT ·dotU8AVX512(SB), NOSPLIT, $0-52
	MOVQ         a_base+0(FP), SI
	MOVQ         b_base+24(FP), DI
	MOVQ         a_len+8(FP), CX
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z8                 // XOR 0x80 maps u8 b to s8 b-128
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z9                 // s8 ones: VPDPBUSD against it sums a
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3
	CMPQ         CX, $128
	JB           block

loop:
	VMOVDQU64 (SI), Z4
	VMOVDQU64 64(SI), Z5
	VPXORD    (DI), Z8, Z6
	VPXORD    64(DI), Z8, Z7
	VPDPBUSD  Z6, Z4, Z0
	VPDPBUSD  Z7, Z5, Z1
	VPDPBUSD  Z9, Z4, Z2
	VPDPBUSD  Z9, Z5, Z3
	ADDQ      $128, SI
	ADDQ      $128, DI
	SUBQ      $128, CX
	CMPQ      CX, $128
	JAE       loop

block:
	CMPQ      CX, $64
	JB        tail
	VMOVDQU64 (SI), Z4
	VPXORD    (DI), Z8, Z6
	VPDPBUSD  Z6, Z4, Z0
	VPDPBUSD  Z9, Z4, Z2
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $64, CX

tail:
	// 0..63 bytes left. Disabled lanes load as zero and are not read; a
	// zero a byte contributes nothing to either sum.
	TESTQ      CX, CX
	JE         reduce
	MOVQ       $1, AX
	SHLQ       CX, AX
	DECQ       AX
	KMOVQ      AX, K1
	VMOVDQU8.Z (SI), K1, Z4
	VMOVDQU8.Z (DI), K1, Z6
	VPXORD     Z8, Z6, Z6
	VPDPBUSD   Z6, Z4, Z1
	VPDPBUSD   Z9, Z4, Z3

reduce:
	HSUMD_Z0
	MOVL       AX, ret+48(FP)
	VZEROUPPER
	RET

// func l2U8AVX512(a, b []uint8) uint32
TEXT ·l2U8AVX512(SB), NOSPLIT, $0-52
	MOVQ         a_base+0(FP), SI
	MOVQ         b_base+24(FP), DI
	MOVQ         a_len+8(FP), CX
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z8
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z9
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3
	CMPQ         CX, $128
	JB           block

loop:
	VMOVDQU64 (SI), Z4
	VMOVDQU64 64(SI), Z5
	VMOVDQU64 (DI), Z6
	VMOVDQU64 64(DI), Z7
	VPMAXUB   Z6, Z4, Z10
	VPMINUB   Z6, Z4, Z4
	VPSUBB    Z4, Z10, Z4               // d = |a-b|
	VPMAXUB   Z7, Z5, Z11
	VPMINUB   Z7, Z5, Z5
	VPSUBB    Z5, Z11, Z5
	VPXORD    Z8, Z4, Z6                // d-128 as s8
	VPXORD    Z8, Z5, Z7
	VPDPBUSD  Z6, Z4, Z0
	VPDPBUSD  Z7, Z5, Z1
	VPDPBUSD  Z9, Z4, Z2
	VPDPBUSD  Z9, Z5, Z3
	ADDQ      $128, SI
	ADDQ      $128, DI
	SUBQ      $128, CX
	CMPQ      CX, $128
	JAE       loop

block:
	CMPQ      CX, $64
	JB        tail
	VMOVDQU64 (SI), Z4
	VMOVDQU64 (DI), Z6
	VPMAXUB   Z6, Z4, Z10
	VPMINUB   Z6, Z4, Z4
	VPSUBB    Z4, Z10, Z4
	VPXORD    Z8, Z4, Z6
	VPDPBUSD  Z6, Z4, Z0
	VPDPBUSD  Z9, Z4, Z2
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $64, CX

tail:
	// Disabled lanes load as zero in both a and b, so d is zero there.
	TESTQ      CX, CX
	JE         reduce
	MOVQ       $1, AX
	SHLQ       CX, AX
	DECQ       AX
	KMOVQ      AX, K1
	VMOVDQU8.Z (SI), K1, Z4
	VMOVDQU8.Z (DI), K1, Z6
	VPMAXUB    Z6, Z4, Z10
	VPMINUB    Z6, Z4, Z4
	VPSUBB     Z4, Z10, Z4
	VPXORD     Z8, Z4, Z6
	VPDPBUSD   Z6, Z4, Z1
	VPDPBUSD   Z9, Z4, Z3

reduce:
	HSUMD_Z0
	MOVL       AX, ret+48(FP)
	VZEROUPPER
	RET
