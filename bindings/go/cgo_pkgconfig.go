//go:build zyfa_pkgconfig

package zyfa

// Vendored or copied away from this repository's include/: the header and the library of an installed
// zyfa, through its zyfa.pc (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig). Build with -tags zyfa_pkgconfig.

// #cgo pkg-config: zyfa
import "C"
