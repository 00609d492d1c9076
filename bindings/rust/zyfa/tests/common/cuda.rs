//! GPU memory for the device tests through the CUDA driver, opened at run time (libcuda.so.1): the crate
//! and its host tests link no CUDA library, and a machine without a driver or a GPU skips the device tests
//! (ZYFA_REQUIRE_DEVICE=1 makes that a failure, for the device machine). Every call makes device 0's
//! primary context current on its thread first; libzyfa's runtime uses that same context, so its launches
//! on the default stream are ordered with these copies.
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

type CuResult = c_int;
// cuGetErrorString
type ErrorStringFn = unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult;

// The signatures of cuda.h: CUdeviceptr is a u64, CUcontext a pointer, CUdevice an int.
struct Driver {
    context: usize, // CUcontext, kept as an address so the struct is Send and Sync
    set_current: unsafe extern "C" fn(*mut c_void) -> CuResult,
    alloc: unsafe extern "C" fn(*mut u64, usize) -> CuResult,
    free: unsafe extern "C" fn(u64) -> CuResult,
    upload: unsafe extern "C" fn(u64, *const c_void, usize) -> CuResult,
    download: unsafe extern "C" fn(*mut c_void, u64, usize) -> CuResult,
    synchronize: unsafe extern "C" fn() -> CuResult,
    error_string: ErrorStringFn,
}

const RTLD_NOW: c_int = 2;
#[link(name = "dl")]
extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

unsafe fn symbol<T: Copy>(driver: *mut c_void, name: &CStr) -> Result<T, String> {
    let address = dlsym(driver, name.as_ptr());
    if address.is_null() {
        return Err(format!("libcuda.so.1 has no {name:?}"));
    }
    Ok(std::mem::transmute_copy(&address))
}

fn open() -> Result<Driver, String> {
    // SAFETY: each symbol is cast to its signature in cuda.h; the calls follow the driver's contract.
    unsafe {
        let driver = dlopen(c"libcuda.so.1".as_ptr(), RTLD_NOW);
        if driver.is_null() {
            return Err("no CUDA driver (libcuda.so.1 did not load)".into());
        }
        let error_string: ErrorStringFn = symbol(driver, c"cuGetErrorString")?;
        let why = |call: &str, status: CuResult| failure(error_string, call, status);
        let init: unsafe extern "C" fn(c_uint) -> CuResult = symbol(driver, c"cuInit")?;
        let device_count: unsafe extern "C" fn(*mut c_int) -> CuResult = symbol(driver, c"cuDeviceGetCount")?;
        let device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult = symbol(driver, c"cuDeviceGet")?;
        let primary_retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> CuResult =
            symbol(driver, c"cuDevicePrimaryCtxRetain")?;
        let (mut count, mut device, mut context) = (0, 0, std::ptr::null_mut());
        match init(0) {
            0 => {}
            status => return Err(why("cuInit", status)),
        }
        match device_count(&mut count) {
            0 if count > 0 => {}
            0 => return Err("the CUDA driver sees no device".into()),
            status => return Err(why("cuDeviceGetCount", status)),
        }
        match device_get(&mut device, 0) {
            0 => {}
            status => return Err(why("cuDeviceGet", status)),
        }
        match primary_retain(&mut context, device) {
            0 => {}
            status => return Err(why("cuDevicePrimaryCtxRetain", status)),
        }
        Ok(Driver {
            context: context as usize,
            set_current: symbol(driver, c"cuCtxSetCurrent")?,
            alloc: symbol(driver, c"cuMemAlloc_v2")?,
            free: symbol(driver, c"cuMemFree_v2")?,
            upload: symbol(driver, c"cuMemcpyHtoD_v2")?,
            download: symbol(driver, c"cuMemcpyDtoH_v2")?,
            synchronize: symbol(driver, c"cuCtxSynchronize")?,
            error_string,
        })
    }
}

fn driver() -> &'static Result<Driver, String> {
    static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();
    DRIVER.get_or_init(open)
}

/// False (after saying why) where no GPU is usable, so the caller returns early; panics instead when
/// ZYFA_REQUIRE_DEVICE=1. Rust's test harness has no skip: the message is the record.
pub fn gpu_usable(test: &str) -> bool {
    match driver() {
        Ok(_) => true,
        Err(why) if std::env::var("ZYFA_REQUIRE_DEVICE").as_deref() == Ok("1") => {
            panic!("{test}: ZYFA_REQUIRE_DEVICE is set and no GPU is usable: {why}")
        }
        Err(why) => {
            eprintln!("{test}: skipped, no GPU: {why}");
            false
        }
    }
}

/// Runs one driver call with the primary context current on this thread; panics with the call's name.
fn call(what: &str, f: impl FnOnce(&Driver) -> CuResult) {
    let d = driver().as_ref().expect("gpu_usable() was checked first");
    // SAFETY: the context was retained in open() and is never released.
    let status = match unsafe { (d.set_current)(d.context as *mut c_void) } {
        0 => f(d),
        status => status,
    };
    if status != 0 {
        panic!("{}", failure(d.error_string, what, status));
    }
}

/// "<call>: CUDA error <status> (<the driver's text>)".
fn failure(error_string: ErrorStringFn, call: &str, status: CuResult) -> String {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorString writes a static string or leaves null.
    let text = unsafe {
        error_string(status, &mut text);
        if text.is_null() { "unknown error".into() } else { CStr::from_ptr(text).to_string_lossy() }
    };
    format!("{call}: CUDA error {status} ({text})")
}

/// Device memory of a slice's worth of T, freed on drop.
pub struct DeviceBuffer<T> {
    pub ptr: u64,
    pub len: usize,
    _element: std::marker::PhantomData<T>,
}

impl<T: Copy> DeviceBuffer<T> {
    /// `len` elements, uninitialized.
    pub fn alloc(len: usize) -> DeviceBuffer<T> {
        let mut ptr = 0u64;
        // SAFETY: ptr is a local the driver writes.
        call("cuMemAlloc", |d| unsafe { (d.alloc)(&mut ptr, len.max(1) * std::mem::size_of::<T>()) });
        DeviceBuffer { ptr, len, _element: std::marker::PhantomData }
    }

    pub fn upload(src: &[T]) -> DeviceBuffer<T> {
        let b = DeviceBuffer::alloc(src.len());
        // SAFETY: src spans the bytes copied; the buffer was allocated with that size.
        call("cuMemcpyHtoD", |d| unsafe { (d.upload)(b.ptr, src.as_ptr().cast(), std::mem::size_of_val(src)) });
        b
    }

    /// Waits for the device's work (a launch's own failure shows here) and copies the buffer back.
    pub fn download(&self) -> Vec<T> {
        call("cuCtxSynchronize", |d| unsafe { (d.synchronize)() });
        let mut host = Vec::<T>::with_capacity(self.len);
        // SAFETY: the vector's capacity covers the copy, and every element is written before set_len.
        call("cuMemcpyDtoH", |d| unsafe { (d.download)(host.as_mut_ptr().cast(), self.ptr, self.len * std::mem::size_of::<T>()) });
        unsafe { host.set_len(self.len) };
        host
    }

    pub fn as_ptr(&self) -> *const c_void {
        self.ptr as *const c_void
    }
    pub fn as_mut_ptr(&self) -> *mut c_void {
        self.ptr as *mut c_void
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            // SAFETY: ptr came from cuMemAlloc and is freed once; a failure here cannot be reported.
            unsafe {
                (d.set_current)(d.context as *mut c_void);
                (d.free)(self.ptr);
            }
        }
    }
}
