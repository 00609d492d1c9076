//go:build !zyfa_pkgconfig

package zyfa

// In this repository: the header from its include/, libzyfa.so from CGO_LDFLAGS or the linker's path.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: -lzyfa
import "C"
