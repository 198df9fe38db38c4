//go:build amd64 && !noasm

#include "textflag.h"

// Hand-written (not generated); the reference loop is fwhtWideGeneric.
//
// func fwhtWideAVX2(x *float32, n int)
TEXT ·fwhtWideAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ $8, R8 // butterfly span h, in elements

stage:
	CMPQ R8, CX
	JAE  done
	XORQ R9, R9 // block start

block:
	CMPQ R9, CX
	JAE  nextstage
	LEAQ (DI)(R9*4), SI // a = x[i:i+h]
	LEAQ (SI)(R8*4), DX // b = x[i+h:i+2h]
	MOVQ R8, R10

inner:
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VADDPS  Y1, Y0, Y2
	VSUBPS  Y1, Y0, Y3
	VMOVUPS Y2, (SI)
	VMOVUPS Y3, (DX)
	ADDQ    $32, SI
	ADDQ    $32, DX
	SUBQ    $8, R10
	JNZ     inner
	LEAQ    (R9)(R8*2), R9
	JMP     block

nextstage:
	SHLQ $1, R8
	JMP  stage

done:
	VZEROUPPER
	RET
