#include "textflag.h"

// func gword(off uintptr) uint64
TEXT ·gword(SB),NOSPLIT,$0-16
	MOVD	off+0(FP), R0
	ADD	R0, g, R1
	MOVD	(R1), R1
	MOVD	R1, ret+8(FP)
	RET
