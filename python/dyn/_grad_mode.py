"""Grad mode as a context manager and decorator (no_grad, enable_grad, inference_mode)."""
import _dyn


class _GradMode:
    """Sets grad mode to `mode` inside (None: leaves it as it is)."""

    def __init__(self, mode):
        self._mode = mode

    def __enter__(self):
        self._prev = _dyn.is_grad_enabled()
        if self._mode is not None:
            _dyn._set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _dyn._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _GradMode(self._mode):
                return fn(*args, **kwargs)

        return wrapper
