"""Writes rows_amd64.s: the AVX-512 multi-row float32 kernels (python3 gen_rows_amd64.py).

Each row's arithmetic is instruction for instruction that of the one-row kernel in dot_amd64.s
(the same four accumulators per row, the same block and tail structure, the same reduction), so
Rows kernels return bit-identical results to Dot/L2Squared; only the interleaving differs: four
rows advance together, and each query chunk is loaded once per group instead of once per row.
"""

from pathlib import Path

ROWS = 4  # rows per group; accumulators Z(4r)..Z(4r+3) for row r, 16 in all
Q = [16, 17, 18, 19]  # query chunks
T = [20, 21, 22, 23]  # one scratch per row
PTR = ["DI", "R8", "R9", "R10"]


def acc(r: int, j: int) -> str:
    return f"Z{4 * r + j}"


def chunk(kind: str, off: int, q: int, j: int, masked: bool = False) -> list[str]:
    """One 16-lane chunk at byte offset off of every row into accumulator j."""
    out = []
    for r in range(ROWS):
        p, t, a = PTR[r], f"Z{T[r]}", acc(r, j)
        if kind == "l2":
            if masked:
                out += [f"VMOVUPS.Z   ({p}), K1, {t}", f"VSUBPS      {t}, Z{q}, {t}"]
            else:
                out += [f"VSUBPS      {off}({p}), Z{q}, {t}"]
            out += [f"VFMADD231PS {t}, {t}, {a}"]
        elif masked:
            out += [f"VMOVUPS.Z   ({p}), K1, {t}", f"VFMADD231PS {t}, Z{q}, {a}"]
        else:
            out += [f"VFMADD231PS {off}({p}), Z{q}, {a}"]
    return out


def hsum(a: int, b: int, c: int, d: int) -> list[str]:
    """HSUM_Z0 of dot_amd64.s on one row's accumulators: the row's sum ends in the low lane
    of Xa; Zb..Zd are clobbered."""
    return [
        f"VADDPS        Z{b}, Z{a}, Z{a}",
        f"VADDPS        Z{d}, Z{c}, Z{c}",
        f"VADDPS        Z{c}, Z{a}, Z{a}",
        f"VEXTRACTF64X4 $1, Z{a}, Y{b}",
        f"VADDPS        Y{b}, Y{a}, Y{a}",
        f"VEXTRACTF128  $1, Y{a}, X{b}",
        f"VADDPS        X{b}, X{a}, X{a}",
        f"VPERMILPS     $0x0e, X{a}, X{b}",
        f"VADDPS        X{b}, X{a}, X{a}",
        f"VPERMILPS     $0x01, X{a}, X{b}",
        f"VADDSS        X{b}, X{a}, X{a}",
    ]


def advance(n: int) -> list[str]:
    return [f"ADDQ        ${n}, {p}" for p in ["SI", *PTR]]


def kernel(kind: str) -> list[str]:
    name = f"{kind}RowsAVX512"
    L = [
        f"// func {name}(q, rows []float32, ids []uint32, out []float32)",
        f"TEXT ·{name}(SB), NOSPLIT, $0-96",
        "\tMOVQ rows_base+24(FP), BX",
        "\tMOVQ ids_base+48(FP), R11",
        "\tMOVQ ids_len+56(FP), R12",
        "\tMOVQ out_base+72(FP), R13",
        "\tMOVQ q_len+8(FP), R14",
        "\tSHLQ $2, R14 // bytes per row",
        "",
        "group:",
        "\t// Row pointers of the next (up to) four ids; missing rows repeat the",
        "\t// first, and only real rows are stored.",
        "\tTESTQ R12, R12",
        "\tJE    done",
        "\tMOVL  (R11), AX",
        "\tIMULQ R14, AX",
        "\tLEAQ  (BX)(AX*1), DI",
        "\tMOVQ  DI, R8",
        "\tMOVQ  DI, R9",
        "\tMOVQ  DI, R10",
    ]
    for r, p in enumerate(PTR[1:], start=1):
        L += [
            f"\tCMPQ  R12, ${r + 1}",
            "\tJB    pointers",
            f"\tMOVL  {4 * r}(R11), AX",
            "\tIMULQ R14, AX",
            f"\tLEAQ  (BX)(AX*1), {p}",
        ]
    L += ["", "pointers:", "\tMOVQ q_base+0(FP), SI", "\tMOVQ q_len+8(FP), CX"]
    L += [f"\tVPXORD {acc(r, j)}, {acc(r, j)}, {acc(r, j)}" for r in range(ROWS) for j in range(4)]
    L += ["\tCMPQ CX, $64", "\tJB   blocks", "", "loop:"]
    L += [f"\tVMOVUPS     {64 * j}(SI), Z{Q[j]}" for j in range(4)]
    for j in range(4):
        L += ["\t" + s for s in chunk(kind, 64 * j, Q[j], j)]
    L += ["\t" + s for s in advance(256)]
    L += ["\tSUBQ        $64, CX", "\tCMPQ        CX, $64", "\tJAE         loop", "", "blocks:"]
    for j, (lim, lbl) in enumerate([(16, "tail"), (32, "tail16"), (48, "tail32")]):
        L += [f"\tCMPQ        CX, ${lim}", f"\tJB          {lbl}"]
        L += [f"\tVMOVUPS     {64 * j}(SI), Z{Q[j]}"]
        L += ["\t" + s for s in chunk(kind, 64 * j, Q[j], j + 1)]
    L += ["\t" + s for s in advance(192)] + ["\tSUBQ        $48, CX", "\tJMP         tail", ""]
    L += ["tail32:"] + ["\t" + s for s in advance(128)] + ["\tSUBQ $32, CX", "\tJMP  tail", ""]
    L += ["tail16:"] + ["\t" + s for s in advance(64)] + ["\tSUBQ $16, CX", ""]
    L += [
        "tail:",
        "\tTESTQ       CX, CX",
        "\tJE          reduce",
        "\tMOVL        $1, AX",
        "\tSHLL        CX, AX",
        "\tDECL        AX",
        "\tKMOVW       AX, K1",
        f"\tVMOVUPS.Z   (SI), K1, Z{Q[0]}",
    ]
    L += ["\t" + s for s in chunk(kind, 0, Q[0], 0, masked=True)]
    L += ["", "reduce:"]
    for r in range(ROWS):
        a = [4 * r + j for j in range(4)]
        L += ["\t" + x for x in hsum(*a)]
    L += ["\tVMOVSS      X0, (R13)"]
    for r in range(1, ROWS):
        L += [f"\tCMPQ        R12, ${r + 1}", "\tJB          next", f"\tVMOVSS      X{4 * r}, {4 * r}(R13)"]
    L += [
        "",
        "next:",
        f"\tSUBQ        ${ROWS}, R12",
        "\tJBE         done",
        f"\tADDQ        ${4 * ROWS}, R11",
        f"\tADDQ        ${4 * ROWS}, R13",
        "\tJMP         group",
        "",
        "done:",
        "\tVZEROUPPER",
        "\tRET",
        "",
    ]
    return L


HEADER = """// Code generated by gen_rows_amd64.py; DO NOT EDIT.

//go:build amd64 && !noasm

#include "textflag.h"

// Registers of the multi-row kernels:
//   SI  query cursor    DI, R8, R9, R10  the four row cursors    CX  elements left
//   BX  rows base    R11/R12  ids cursor/left    R13  out cursor    R14  bytes per row
//   Z(4r)..Z(4r+3)  row r's accumulators    Z16-Z19  query chunks    Z20-Z23  scratch

"""

def stub(kind: str) -> list[str]:
    """The dispatch stub: the AVX-512 body, or the Go loop over the one-row kernel."""
    return [
        f"// func {kind}Rows(q, rows []float32, ids []uint32, out []float32)",
        f"TEXT ·{kind}Rows(SB), NOSPLIT, $0-96",
        "\tCMPB ·useAVX512(SB), $0",
        "\tJNE  avx512",
        f"\tJMP  ·{kind}RowsLoop(SB)",
        "",
        "avx512:",
        f"\tJMP ·{kind}RowsAVX512(SB)",
        "",
    ]


text = HEADER + "\n".join(stub("l2") + stub("dot") + kernel("l2") + kernel("dot"))
Path(__file__).with_name("rows_amd64.s").write_text(text)
