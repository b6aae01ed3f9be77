"""dyn.accelerator (torch.accelerator): dyn runs on the CPU, so there is no accelerator; programs
that ask (`torch.accelerator.is_available()`, `current_accelerator()`) find none and pick the CPU,
as PyTorch does on a machine without one."""


def is_available():
    return False


def current_accelerator(check_available=False):
    """The accelerator device type, or None: there is none."""
    return None


def device_count():
    return 0


def _none(what):
    raise RuntimeError(f"torch.accelerator.{what}(): no accelerator is available (dyn runs on the CPU); "
                       "check torch.accelerator.is_available() first")


def current_device_index():
    _none("current_device_index")


current_device_idx = current_device_index


def set_device_index(device):
    _none("set_device_index")


set_device_idx = set_device_index


def current_stream(device=None):
    _none("current_stream")


def synchronize(device=None):
    _none("synchronize")


def empty_cache():
    """Nothing is cached on a device (as PyTorch without an accelerator: a no-op)."""


def memory_allocated(device_index=None):
    return 0


def max_memory_allocated(device_index=None):
    return 0
