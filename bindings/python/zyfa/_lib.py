"""Finds and loads libzyfa.so (never builds it) and turns returned statuses into exceptions.

Search order: $ZYFA_LIB (the file), $ZYFA_LIB_DIR/libzyfa.so, a libzyfa.so installed next to this
package, then the dynamic linker's own search (LD_LIBRARY_PATH, the ld.so cache). The library loads on
the first call, so ``import zyfa`` works on a machine that only wants the argument rules or has no
library yet."""
import ctypes
import os
import threading

from . import _abi
from .errors import error_for

LIBRARY_NAMES = ("libzyfa.so", "libzyfa.so.0.2")  # the soname carries the minor below 1.0

_lock = threading.Lock()
_library = None


def _candidates():
    if os.environ.get("ZYFA_LIB"):
        yield os.environ["ZYFA_LIB"]
    if os.environ.get("ZYFA_LIB_DIR"):
        yield os.path.join(os.environ["ZYFA_LIB_DIR"], LIBRARY_NAMES[0])
    here = os.path.dirname(os.path.abspath(__file__))
    for name in LIBRARY_NAMES:
        if os.path.exists(os.path.join(here, name)):
            yield os.path.join(here, name)
    yield from LIBRARY_NAMES


def check_version(path, version):
    """Refuses a library older than this package (it may lack a function or a descriptor field the package
    sets) or of another major version. A newer one of the same major version is loaded: zyfa.h's descriptors
    are append-only and versioned by struct_size, so a library reads the layouts of every earlier release."""
    major = _abi.ZYFA_VERSION // 10000
    if version < _abi.ZYFA_VERSION or version // 10000 != major:
        raise ImportError(f"{path} is zyfa version {version}; this package needs version {_abi.ZYFA_VERSION} or a "
                          f"later {major}.x release")


def _load():
    failures = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            failures.append(f"{path}: {e}")
            continue
        for name, restype, argtypes in _abi.FUNCTIONS:
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        check_version(path, lib.zyfa_version())
        return lib
    raise ImportError("libzyfa.so not found; set ZYFA_LIB to the file or ZYFA_LIB_DIR to its folder. Tried:\n  "
                      + "\n  ".join(failures))


def lib():
    """The loaded library (loaded on first use)."""
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                _library = _load()
    return _library


def check(status):
    """Raises the exception of a non-zero status with this thread's zyfa_last_error() message. A Python
    thread is one OS thread, so the message read here is the one of the call just made."""
    if status == _abi.ZYFA_STATUS_SUCCESS:
        return
    library = lib()
    message = library.zyfa_last_error().decode(errors="replace")
    raise error_for(status, message, library.zyfa_status_string(status).decode(errors="replace"))


def library_version():
    """ZYFA_VERSION of the loaded libzyfa."""
    return lib().zyfa_version()
