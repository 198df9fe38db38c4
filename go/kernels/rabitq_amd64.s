//go:build amd64 && !noasm

#include "textflag.h"

// Hand-written (not generated); the reference loop is bitDotU8RowsGeneric
// and the method is described at bitDotU8RowsAVX2 in rabitq_amd64.go.

// bitShuf spreads byte j of a broadcast 32-bit chunk over bytes 8j..8j+7
// (VPSHUFB works within 128-bit lanes; each lane holds the chunk 4 times).
DATA bitShuf<>+0(SB)/8, $0x0000000000000000
DATA bitShuf<>+8(SB)/8, $0x0101010101010101
DATA bitShuf<>+16(SB)/8, $0x0202020202020202
DATA bitShuf<>+24(SB)/8, $0x0303030303030303
GLOBL bitShuf<>(SB), RODATA|NOPTR, $32

// bitSel holds 1<<(p%8) in byte p: the bit of its byte that position p tests.
DATA bitSel<>+0(SB)/8, $0x8040201008040201
DATA bitSel<>+8(SB)/8, $0x8040201008040201
DATA bitSel<>+16(SB)/8, $0x8040201008040201
DATA bitSel<>+24(SB)/8, $0x8040201008040201
GLOBL bitSel<>(SB), RODATA|NOPTR, $32

// func bitDotU8RowsAVX2(q *uint8, words int, codes *uint64, stride int, ids *uint32, n int, out *uint32)
TEXT ·bitDotU8RowsAVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ words+8(FP), CX
	MOVQ codes+16(FP), DI
	MOVQ stride+24(FP), R11
	MOVQ ids+32(FP), R8
	MOVQ n+40(FP), R9
	MOVQ out+48(FP), R10
	SHLQ $3, R11 // bytes per row
	VMOVDQU bitShuf<>(SB), Y6
	VMOVDQU bitSel<>(SB), Y7
	VPXOR   Y0, Y0, Y0

row:
	MOVL  (R8), AX
	IMULQ R11, AX
	LEAQ  (DI)(AX*1), DX // this code
	MOVQ  SI, BX         // query bytes
	MOVQ  CX, R12        // words left
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2

word:
	// Low 32 bits of the word: dimensions 0..31 of it.
	VPBROADCASTD (DX), Y3
	VPSHUFB      Y6, Y3, Y3
	VPAND        Y7, Y3, Y3
	VPCMPEQB     Y7, Y3, Y3 // 0xff where the bit is set
	VPAND        (BX), Y3, Y3
	VPSADBW      Y0, Y3, Y3
	VPADDQ       Y3, Y1, Y1
	// High 32 bits: dimensions 32..63.
	VPBROADCASTD 4(DX), Y4
	VPSHUFB      Y6, Y4, Y4
	VPAND        Y7, Y4, Y4
	VPCMPEQB     Y7, Y4, Y4
	VPAND        32(BX), Y4, Y4
	VPSADBW      Y0, Y4, Y4
	VPADDQ       Y4, Y2, Y2
	ADDQ         $8, DX
	ADDQ         $64, BX
	DECQ         R12
	JNZ          word

	VPADDQ       Y2, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDQ       X2, X1, X1
	VPSHUFD      $0x4e, X1, X2
	VPADDQ       X2, X1, X1
	VMOVQ        X1, AX
	MOVL         AX, (R10)
	ADDQ         $4, R8
	ADDQ         $4, R10
	DECQ         R9
	JNZ          row

	VZEROUPPER
	RET
