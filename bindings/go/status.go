package zyfa

// #include "zyfa/zyfa.h"
import "C"

import (
	"fmt"
	"runtime"
)

// Status is a failure status of the C ABI. Like syscall.Errno, each value is itself an error, and an
// *Error matches its status with errors.Is(err, zyfa.ErrBadShape).
type Status int32

const (
	ErrNullArgument       Status = C.ZYFA_STATUS_NULL_ARGUMENT
	ErrBadStructSize      Status = C.ZYFA_STATUS_BAD_STRUCT_SIZE
	ErrBadDtype           Status = C.ZYFA_STATUS_BAD_DTYPE
	ErrBadLayout          Status = C.ZYFA_STATUS_BAD_LAYOUT
	ErrUnsupportedHeadDim Status = C.ZYFA_STATUS_UNSUPPORTED_HEAD_DIM
	ErrBadShape           Status = C.ZYFA_STATUS_BAD_SHAPE
	ErrBadHeadRatio       Status = C.ZYFA_STATUS_BAD_HEAD_RATIO
	ErrBadStride          Status = C.ZYFA_STATUS_BAD_STRIDE
	ErrMisaligned         Status = C.ZYFA_STATUS_MISALIGNED
	ErrNullTensor         Status = C.ZYFA_STATUS_NULL_TENSOR
	ErrAliasedOutput      Status = C.ZYFA_STATUS_ALIASED_OUTPUT
	ErrBadDescale         Status = C.ZYFA_STATUS_BAD_DESCALE
	ErrFP8FieldWithBF16   Status = C.ZYFA_STATUS_FP8_FIELD_WITH_BF16
	ErrNotCausal          Status = C.ZYFA_STATUS_NOT_CAUSAL
	ErrSizeOverflow       Status = C.ZYFA_STATUS_SIZE_OVERFLOW
	ErrBadSoftmaxScale    Status = C.ZYFA_STATUS_BAD_SOFTMAX_SCALE
	ErrNoDevice           Status = C.ZYFA_STATUS_NO_DEVICE
	ErrUnsupportedDevice  Status = C.ZYFA_STATUS_UNSUPPORTED_DEVICE
	ErrCUDA               Status = C.ZYFA_STATUS_CUDA_ERROR
	ErrOutOfMemory        Status = C.ZYFA_STATUS_OUT_OF_MEMORY
	ErrNotPrepared        Status = C.ZYFA_STATUS_NOT_PREPARED
	ErrBadArgument        Status = C.ZYFA_STATUS_BAD_ARGUMENT
	ErrInternal           Status = C.ZYFA_STATUS_INTERNAL
)

// Error is the library's static description of the status, e.g. "ZYFA_STATUS_BAD_DTYPE: unknown input dtype".
func (s Status) Error() string {
	return C.GoString(C.zyfa_status_string(C.zyfa_status(s)))
}

// Error is a failed call: its status and the message of zyfa_last_error(), which names the field and
// the value at fault.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("zyfa: %s (%s)", e.Message, e.Status.Error())
}

// Is makes errors.Is(err, zyfa.ErrX) true for an *Error of status ErrX.
func (e *Error) Is(target error) bool {
	status, ok := target.(Status)
	return ok && status == e.Status
}

// Unwrap exposes the status, so errors.As(err, &status) works too.
func (e *Error) Unwrap() error {
	return e.Status
}

// call runs one library call and turns its status into an error. zyfa_last_error() is per OS thread, so
// the goroutine stays on its thread from the call to the read of the message.
func call(f func() C.zyfa_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := f()
	if status == C.ZYFA_STATUS_SUCCESS {
		return nil
	}
	return &Error{Status: Status(status), Message: C.GoString(C.zyfa_last_error())}
}

// bindingError is an error raised before the library is called (a slice too short for its shape), in
// the library's terms so callers match one set of statuses.
func bindingError(status Status, format string, args ...interface{}) error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}
