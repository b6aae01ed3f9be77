"""dyn.cuda (torch.cuda): there is no CUDA under dynrepl; programs that ask find it unavailable."""
import _dyn


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def _no_cuda(what):
    raise RuntimeError(f"torch.cuda.{what}(): dyn runs on the CPU only and has no CUDA device; "
                       "check torch.cuda.is_available() first")


def current_device():
    _no_cuda("current_device")


def get_device_name(device=None):
    _no_cuda("get_device_name")


def get_device_properties(device=None):
    _no_cuda("get_device_properties")


def set_device(device):
    _no_cuda("set_device")


def manual_seed(seed):
    """No CUDA generator to seed (as PyTorch, silently)."""


def manual_seed_all(seed):
    """No CUDA generators to seed (as PyTorch, silently)."""


def seed():
    pass


def seed_all():
    pass


def synchronize(device=None):
    pass


def empty_cache():
    pass


def is_bf16_supported(including_emulation=True):
    return False


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def reset_peak_memory_stats(device=None):
    pass


class amp:
    """torch.cuda.amp: autocast and GradScaler, which do nothing without CUDA."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from .amp import autocast

        return autocast("cuda", dtype=dtype, enabled=enabled)

    @staticmethod
    def GradScaler(*args, **kwargs):
        from .amp import GradScaler

        return GradScaler("cuda", *args, **kwargs)


FloatTensor = DoubleTensor = LongTensor = None
del _dyn
