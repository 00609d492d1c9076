// Package cudatest gives the binding's device tests GPU memory through the CUDA driver, which it opens at
// run time (libcuda.so.1): the binding and its host tests link no CUDA library, and a machine without a
// driver or a GPU skips the device tests instead of failing to build or link.
//
// Every call makes device 0's primary context current on the OS thread it runs on, because goroutines
// move between threads; libzyfa's runtime uses the same primary context, so its launches on the default
// stream are ordered with these copies.
package cudatest

/*
#cgo LDFLAGS: -ldl
#include "cudatest.h"
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"unsafe"
)

var (
	openOnce sync.Once
	openErr  error
)

// Open returns nil where device 0 is usable, else why not. The driver is opened once per process; the
// C side keeps no lock, so the later calls (alloc, copies) are for tests that do not run in parallel.
func Open() error {
	openOnce.Do(func() {
		if status := C.zyfa_cudatest_open(); status != 0 {
			openErr = fmt.Errorf("%s", C.GoString(C.zyfa_cudatest_error()))
		}
	})
	return openErr
}

// RequireGPU skips t where no GPU is usable; ZYFA_REQUIRE_DEVICE=1 turns that skip into a failure, for
// the device machine, where a skip would hide a broken test setup.
func RequireGPU(t *testing.T) {
	t.Helper()
	if err := Open(); err != nil {
		if os.Getenv("ZYFA_REQUIRE_DEVICE") == "1" {
			t.Fatalf("ZYFA_REQUIRE_DEVICE is set and no GPU is usable: %v", err)
		}
		t.Skipf("no GPU: %v", err)
	}
}

// Buffer is device memory of Bytes bytes.
type Buffer struct {
	Ptr   uintptr
	Bytes int
}

func check(t *testing.T, what string, status C.int) {
	t.Helper()
	if status != 0 {
		t.Fatalf("%s: %s", what, C.GoString(C.zyfa_cudatest_error()))
	}
}

// Alloc returns device memory of n bytes, freed when t ends.
func Alloc(t *testing.T, n int) Buffer {
	t.Helper()
	var ptr C.uint64_t
	size := n
	if size == 0 {
		size = 1 // cuMemAlloc refuses 0 bytes; an empty buffer still gets an address of its own
	}
	check(t, fmt.Sprintf("cuMemAlloc(%d)", n), C.zyfa_cudatest_alloc(&ptr, C.size_t(size)))
	t.Cleanup(func() { C.zyfa_cudatest_free(ptr) })
	return Buffer{Ptr: uintptr(ptr), Bytes: n}
}

// Upload copies a Go slice into new device memory, freed when t ends.
func Upload[T any](t *testing.T, src []T) Buffer {
	t.Helper()
	n := len(src) * int(unsafe.Sizeof(*new(T)))
	b := Alloc(t, n)
	if n > 0 {
		check(t, "cuMemcpyHtoD", C.zyfa_cudatest_upload(C.uint64_t(b.Ptr), unsafe.Pointer(&src[0]), C.size_t(n)))
	}
	return b
}

// Download waits for the device's work and copies len(dst) elements from b into dst: a launch's own
// failure shows here.
func Download[T any](t *testing.T, b Buffer, dst []T) {
	t.Helper()
	n := len(dst) * int(unsafe.Sizeof(*new(T)))
	if n > b.Bytes {
		t.Fatalf("Download of %d bytes from a buffer of %d", n, b.Bytes)
	}
	check(t, "cuCtxSynchronize", C.zyfa_cudatest_synchronize())
	if n > 0 {
		check(t, "cuMemcpyDtoH", C.zyfa_cudatest_download(unsafe.Pointer(&dst[0]), C.uint64_t(b.Ptr), C.size_t(n)))
	}
}
