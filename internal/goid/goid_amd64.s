#include "textflag.h"

// func gword(off uintptr) uint64
TEXT ·gword(SB),NOSPLIT,$0-16
	MOVQ	(TLS), AX
	MOVQ	off+0(FP), BX
	MOVQ	(AX)(BX*1), AX
	MOVQ	AX, ret+8(FP)
	RET
