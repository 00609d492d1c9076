// Package zyfa calls libzyfa: FP8 and BF16 causal prefill attention on NVIDIA Hopper, with a CPU backend
// that runs the GPU kernels' algorithm on host memory.
//
// Describe a shape once with Attention, then call ForwardHostBF16 / ForwardHostFP8 on slices (BF16 as
// uint16 bit patterns, FP8 e4m3 as uint8 codes) or ForwardDevice on device pointers. Every failure is an
// *Error whose Status matches the sentinels with errors.Is:
//
//	if errors.Is(err, zyfa.ErrUnsupportedHeadDim) { ... }
//
// Building needs the header (found in this repository's include/) and libzyfa.so: set
// CGO_LDFLAGS=-L<dir of libzyfa.so> unless it is on the linker's path, and LD_LIBRARY_PATH to run.
package zyfa

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#cgo LDFLAGS: -lzyfa
#include "zyfa/zyfa.h"
*/
import "C"

// HeaderVersion is the ZYFA_VERSION these bindings were written against.
const HeaderVersion = int(C.ZYFA_VERSION)

// LibraryVersion is ZYFA_VERSION of the loaded libzyfa; it differs from HeaderVersion when a mismatched
// library is loaded.
func LibraryVersion() int {
	return int(C.zyfa_version())
}
