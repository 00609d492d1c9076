// Package zyfa calls libzyfa: FP8 and BF16 causal prefill attention on NVIDIA Hopper, with a CPU backend
// that runs the GPU kernels' algorithm on host memory.
//
// Describe a shape once with Attention, then call ForwardHostBF16 / ForwardHostFP8 on slices (BF16 as
// uint16 bit patterns, FP8 e4m3 as uint8 codes) or ForwardDevice on device pointers. Every failure is an
// *Error whose Status matches the sentinels with errors.Is:
//
//	if errors.Is(err, zyfa.ErrUnsupportedHeadDim) { ... }
//
// Building needs the header and libzyfa.so, found one of two ways (cgo_tree.go, cgo_pkgconfig.go):
//   - in this repository: the header from its include/; set CGO_LDFLAGS=-L<dir of libzyfa.so> unless the
//     library is on the linker's path;
//   - vendored or copied elsewhere: build with -tags zyfa_pkgconfig, and pkg-config finds an installed
//     zyfa (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig).
//
// Either way, LD_LIBRARY_PATH (or the system's library path) finds libzyfa.so at run time.
package zyfa

// #include "zyfa/zyfa.h"
import "C"

// HeaderVersion is the ZYFA_VERSION these bindings were written against.
const HeaderVersion = int(C.ZYFA_VERSION)

// LibraryVersion is ZYFA_VERSION of the loaded libzyfa; it differs from HeaderVersion when a mismatched
// library is loaded.
func LibraryVersion() int {
	return int(C.zyfa_version())
}
