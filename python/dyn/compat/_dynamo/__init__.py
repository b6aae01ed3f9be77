"""torch._dynamo: the calls programs make on PyTorch's graph capture, on dyn's."""
import _dyn

from ... import debug as _debug
from ..._compile import compile as _compile_fn
from ..._compile import mark_dynamic, mark_static, maybe_mark_dynamic, list_backends  # noqa: F401
from . import exc  # noqa: F401


class _Config:
    """torch._dynamo.config: cache_size_limit applies to functions compiled after it is set."""

    cache_size_limit = 8
    suppress_errors = False
    verbose = False
    capture_scalar_outputs = False
    automatic_dynamic_shapes = True


config = _Config()


def reset():
    """Forgets every compiled graph and event (as dyn.debug.reset())."""
    _debug.reset()


def optimize(backend="inductor", nopython=False, **kwargs):
    """The pre-2.0 spelling of torch.compile."""
    return lambda fn: _compile_fn(fn, backend=backend, fullgraph=nopython)


def disable(fn=None, recursive=True):
    return fn if fn is not None else (lambda f: f)


def allow_in_graph(fn):
    return fn


def graph_break():
    """Cuts the graph here, as dyn.sync() does inside a compile region."""
    _dyn.sync()


def explain(fn, *args, **kwargs):
    return _debug.explain(fn, *args, **kwargs) if args or kwargs else (lambda *a, **k: _debug.explain(fn, *a, **k))
