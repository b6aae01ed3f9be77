"""dyn.amp (torch.amp): mixed precision does not exist in dyn (float32 and float64 only), so
autocast keeps float32 and GradScaler passes gradients through unscaled."""
import functools
import warnings

_warned = set()


class autocast:
    """Context manager and decorator; computes in the dtypes the ops already have."""

    def __init__(self, device_type="cpu", dtype=None, enabled=True, cache_enabled=None):
        if device_type not in ("cpu", "cuda", "xla", "mps"):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, enabled
        if enabled and dtype is not None and "autocast" not in _warned:
            _warned.add("autocast")
            warnings.warn(f"dyn: autocast to {dtype} has no effect; dyn computes in float32/float64", stacklevel=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


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
