"""zyfa's statuses as Python exceptions. A library failure raises a ZyfaError whose ``status`` is the
C status and whose ``message`` is what zyfa_last_error() said (the field and the value at fault). Bad
input is also a ValueError, so ``except ValueError`` catches it as it would any argument error."""
import enum


class Status(enum.IntEnum):
    """zyfa_status, less SUCCESS. Values are the C ABI's and are never renumbered."""

    NULL_ARGUMENT = 1
    BAD_STRUCT_SIZE = 2
    BAD_DTYPE = 3
    BAD_LAYOUT = 4
    UNSUPPORTED_HEAD_DIM = 5
    BAD_SHAPE = 6
    BAD_HEAD_RATIO = 7
    BAD_STRIDE = 8
    MISALIGNED = 9
    NULL_TENSOR = 10
    ALIASED_OUTPUT = 11
    BAD_DESCALE = 12
    FP8_FIELD_WITH_BF16 = 13
    NOT_CAUSAL = 14
    SIZE_OVERFLOW = 15
    BAD_SOFTMAX_SCALE = 16
    NO_DEVICE = 17
    UNSUPPORTED_DEVICE = 18
    CUDA_ERROR = 19
    OUT_OF_MEMORY = 20
    NOT_PREPARED = 21
    BAD_ARGUMENT = 22
    INTERNAL = 23


# Statuses that describe the caller's input, as opposed to the device or the library.
_INPUT_STATUSES = frozenset(s for s in Status if s <= Status.BAD_SOFTMAX_SCALE) | {Status.BAD_ARGUMENT}


class ZyfaError(Exception):
    """A failed zyfa call. ``status`` is a Status (or the raw int of a status newer than this module),
    ``message`` the library's message, ``description`` zyfa_status_string()."""

    def __init__(self, status, message, description=""):
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status = status
        self.message = message
        self.description = description
        super().__init__(f"{message} ({description})" if description else message)

    def __reduce__(self):
        # Rebuilt from the three fields (Exception pickles only its args), so that an error raised in a
        # multiprocessing or ProcessPoolExecutor worker reaches the parent whole.
        return (type(self), (int(self.status), self.message, self.description))


class ZyfaValueError(ZyfaError, ValueError):
    """The library refused its input: shape, dtype, stride, alignment, descale, ..."""


class ZyfaRuntimeError(ZyfaError, RuntimeError):
    """No device, a CUDA error, a missing plan under capture, or an internal error."""


def error_for(status, message, description=""):
    cls = ZyfaValueError if status in _INPUT_STATUSES else ZyfaRuntimeError
    return cls(status, message, description)
