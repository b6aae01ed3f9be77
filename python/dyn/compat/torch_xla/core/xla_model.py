"""torch_xla.core.xla_model (xm): devices, mark_step and the optimizer step, on dyn."""
import dyn as _dyn_pkg


def xla_device(n=None, devkind=None):
    """The XLA device: dyn's CPU, named 'xla:0' as torch_xla names it."""
    return _dyn_pkg.device("xla", 0 if n is None else n)


def mark_step(wait=False):
    """Ends the step: dyn.sync() (dyn runs eagerly outside compile regions, so nothing is pending there)."""
    _dyn_pkg.sync()


def wait_device_ops(devices=None):
    pass


def optimizer_step(optimizer, barrier=False, optimizer_args=None, groups=None, pin_layout=True):
    loss = optimizer.step(**(optimizer_args or {}))
    if barrier:
        mark_step()
    return loss


def get_ordinal(defval=0):
    return 0


def get_local_ordinal(defval=0):
    return 0


def xrt_world_size(defval=1):
    return 1


def world_size():
    return 1


def is_master_ordinal(local=True):
    return True


def master_print(*args, **kwargs):
    print(*args, **kwargs)


def get_xla_supported_devices(devkind=None, max_devices=None):
    return ["xla:0"]


def xla_device_hw(device):
    return "CPU"


def save(data, file_or_path, master_only=True, global_master=False):
    _dyn_pkg.save(data, file_or_path)
