//go:build !amd64 && !arm64 && !386

package goid

const haveG = false

func gword(uintptr) uint64 { panic("goid: gword without assembly") }
