"""dyn.amp (torch.amp): autocast and GradScaler.

autocast("cpu", dtype=torch.bfloat16 or torch.float16) makes matrix products of float32 tensors
compute in that dtype, as PyTorch's CPU autocast does for its lower-precision list (matmul, mm,
bmm, linear, the convolutions, baddbmm, addmm); other ops keep their inputs' dtypes, so a float32
op on a bfloat16 product promotes back to float32 as in PyTorch. Backward is not autocast. The
state is global state compiled functions are guarded on (an entry per autocast dtype).
autocast("cuda") does nothing here (no GPU), with PyTorch's warning."""
import functools
import warnings

import _dyn

_warned = set()


class autocast:
    """Context manager and decorator."""

    def __init__(self, device_type="cpu", dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in ("cpu", "cuda", "xla", "mps", "xpu", "hpu"):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else (_dyn.bfloat16 if device_type == "cpu" else _dyn.float16)
        self._enabled = bool(enabled)
        if device_type != "cpu":
            if enabled and device_type not in _warned:
                _warned.add(device_type)
                warnings.warn(f"User provided device_type of '{device_type}', but {device_type.upper()} is not "
                              "available. Disabling", stacklevel=2)
            self._enabled = False
        elif enabled and self.fast_dtype not in (_dyn.bfloat16, _dyn.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.",
                          stacklevel=2)
            self._enabled = False
        self._prev = []

    def __enter__(self):
        self._prev.append(_dyn.autocast_dtype())
        if self.device == "cpu":
            _dyn._set_autocast(self.fast_dtype if self._enabled else None)
        return self

    def __exit__(self, *exc):
        _dyn._set_autocast(self._prev.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for the device (PyTorch's default asks about CUDA, which is never on here)."""
    return device_type == "cpu" and _dyn.autocast_dtype() is not None


def get_autocast_dtype(device_type):
    d = _dyn.autocast_dtype()
    return d if device_type == "cpu" and d is not None else (_dyn.bfloat16 if device_type == "cpu" else _dyn.float16)


def is_autocast_available(device_type):
    return device_type == "cpu"


class GradScaler:
    """Loss scaling is for float16 gradients, which dyn does not have: scale() returns the loss as
    it is and step() calls the optimizer's step."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._enabled = enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def is_enabled(self):
        return False

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


custom_fwd = lambda fn=None, **kw: fn if fn is not None else (lambda f: f)  # noqa: E731
custom_bwd = custom_fwd
