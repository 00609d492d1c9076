//! zyfa's statuses as a Rust error: every failure carries the status and the message that
//! zyfa_last_error() gave on the calling thread, which names the offending field and value.
use std::ffi::CStr;
use std::fmt;

use zyfa_sys as sys;

/// The failure statuses of the C ABI (`zyfa_status` less SUCCESS). `Unknown` keeps a code from a newer
/// library readable instead of losing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    NullArgument,
    BadStructSize,
    BadDtype,
    BadLayout,
    UnsupportedHeadDim,
    BadShape,
    BadHeadRatio,
    BadStride,
    Misaligned,
    NullTensor,
    AliasedOutput,
    BadDescale,
    Fp8FieldWithBf16,
    NotCausal,
    SizeOverflow,
    BadSoftmaxScale,
    NoDevice,
    UnsupportedDevice,
    CudaError,
    OutOfMemory,
    NotPrepared,
    BadArgument,
    Internal,
    Unknown(i32),
}

// One table for both directions of the mapping.
const STATUS_CODES: [(Status, sys::zyfa_status); 23] = [
    (Status::NullArgument, sys::ZYFA_STATUS_NULL_ARGUMENT),
    (Status::BadStructSize, sys::ZYFA_STATUS_BAD_STRUCT_SIZE),
    (Status::BadDtype, sys::ZYFA_STATUS_BAD_DTYPE),
    (Status::BadLayout, sys::ZYFA_STATUS_BAD_LAYOUT),
    (Status::UnsupportedHeadDim, sys::ZYFA_STATUS_UNSUPPORTED_HEAD_DIM),
    (Status::BadShape, sys::ZYFA_STATUS_BAD_SHAPE),
    (Status::BadHeadRatio, sys::ZYFA_STATUS_BAD_HEAD_RATIO),
    (Status::BadStride, sys::ZYFA_STATUS_BAD_STRIDE),
    (Status::Misaligned, sys::ZYFA_STATUS_MISALIGNED),
    (Status::NullTensor, sys::ZYFA_STATUS_NULL_TENSOR),
    (Status::AliasedOutput, sys::ZYFA_STATUS_ALIASED_OUTPUT),
    (Status::BadDescale, sys::ZYFA_STATUS_BAD_DESCALE),
    (Status::Fp8FieldWithBf16, sys::ZYFA_STATUS_FP8_FIELD_WITH_BF16),
    (Status::NotCausal, sys::ZYFA_STATUS_NOT_CAUSAL),
    (Status::SizeOverflow, sys::ZYFA_STATUS_SIZE_OVERFLOW),
    (Status::BadSoftmaxScale, sys::ZYFA_STATUS_BAD_SOFTMAX_SCALE),
    (Status::NoDevice, sys::ZYFA_STATUS_NO_DEVICE),
    (Status::UnsupportedDevice, sys::ZYFA_STATUS_UNSUPPORTED_DEVICE),
    (Status::CudaError, sys::ZYFA_STATUS_CUDA_ERROR),
    (Status::OutOfMemory, sys::ZYFA_STATUS_OUT_OF_MEMORY),
    (Status::NotPrepared, sys::ZYFA_STATUS_NOT_PREPARED),
    (Status::BadArgument, sys::ZYFA_STATUS_BAD_ARGUMENT),
    (Status::Internal, sys::ZYFA_STATUS_INTERNAL),
];

impl Status {
    /// The C status code.
    pub fn code(self) -> i32 {
        match self {
            Status::Unknown(code) => code,
            known => STATUS_CODES.iter().find(|(s, _)| *s == known).map(|(_, c)| *c).expect("every status is listed"),
        }
    }

    /// The status of a non-zero C code.
    pub fn from_code(code: i32) -> Status {
        STATUS_CODES.iter().find(|(_, c)| *c == code).map(|(s, _)| *s).unwrap_or(Status::Unknown(code))
    }

    /// The library's static description, e.g. "ZYFA_STATUS_BAD_DTYPE: unknown input dtype".
    pub fn description(self) -> String {
        // SAFETY: zyfa_status_string returns a static NUL-terminated string for any value, never NULL.
        unsafe { CStr::from_ptr(sys::zyfa_status_string(self.code())) }.to_string_lossy().into_owned()
    }
}

/// A failed zyfa call: the status and the message of the failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// An error raised by this crate before it calls the library (a slice too short for its shape), in
    /// the library's terms so callers match one set of statuses.
    pub(crate) fn binding(status: Status, message: String) -> Error {
        Error { status, message }
    }

    pub fn status(&self) -> Status {
        self.status
    }

    /// What zyfa_last_error() said: the field and the value at fault.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status.description())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Turns a returned status into a Result, reading the thread's message right away (the next zyfa call
/// on this thread would replace it).
pub(crate) fn check(code: sys::zyfa_status) -> Result<()> {
    if code == sys::ZYFA_STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: zyfa_last_error returns a NUL-terminated per-thread string that lives until the next call.
    let message = unsafe { CStr::from_ptr(sys::zyfa_last_error()) }.to_string_lossy().into_owned();
    Err(Error { status: Status::from_code(code), message })
}
