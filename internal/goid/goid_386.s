#include "textflag.h"

// func gword(off uintptr) uint64
TEXT ·gword(SB),NOSPLIT,$0-12
	MOVL	(TLS), AX
	MOVL	off+0(FP), BX
	MOVL	0(AX)(BX*1), CX
	MOVL	CX, ret_lo+4(FP)
	MOVL	4(AX)(BX*1), CX
	MOVL	CX, ret_hi+8(FP)
	RET
