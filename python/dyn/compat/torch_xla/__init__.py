"""torch_xla on dyn: the XLA device is dyn's CPU, eager mode is dyn's eager mode, and
torch_xla.compile / torch.compile(backend='openxla') are dyn compile regions. torch_xla.sync()
(xm.mark_step()) is dyn.sync(): inside a compile region it cuts the graph, outside it has nothing
pending, because dyn runs eagerly outside regions."""
import dyn as _dyn_pkg

from . import core, experimental, runtime  # noqa: F401

_XLA = _dyn_pkg.device("xla", 0)


def device(index=None):
    """The XLA device (dyn runs it on the CPU)."""
    return _XLA if index in (None, 0) else _dyn_pkg.device("xla", index)


def devices():
    return [_XLA]


def sync(wait=False):
    _dyn_pkg.sync()


def compile(f=None, full_graph=False, name=None, num_different_graphs_allowed=None):
    """torch_xla.compile(fn): fn runs as a dyn compile region (traced, cached, replayed)."""
    if f is None:
        return lambda g: compile(g, full_graph, name, num_different_graphs_allowed)
    kw = {"fullgraph": full_graph, "name": name}
    if num_different_graphs_allowed:
        kw["cache_limit"] = num_different_graphs_allowed
    return _dyn_pkg.compile(f, **kw)


def manual_seed(seed, device=None):
    _dyn_pkg.manual_seed(seed)


__version__ = "2.5.0+dyn"
