//go:build amd64 && !noasm

#include "textflag.h"

// func PrefetchRows(base unsafe.Pointer, stride uintptr, rows []uint32, lines int)
TEXT ·PrefetchRows(SB), NOSPLIT, $0-48
	MOVQ base+0(FP), SI
	MOVQ stride+8(FP), DX
	MOVQ rows_base+16(FP), DI
	MOVQ rows_len+24(FP), CX
	MOVQ lines+40(FP), R8
	TESTQ CX, CX
	JZ   done
	TESTQ R8, R8
	JZ   done

row:
	MOVL (DI), AX
	IMULQ DX, AX
	ADDQ SI, AX
	MOVQ R8, R9

line:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ R9
	JNZ  line
	ADDQ $4, DI
	DECQ CX
	JNZ  row

done:
	RET
