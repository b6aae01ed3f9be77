"""dyn.compiler (torch.compiler): reset and the disable/allow markers."""
from .compat._dynamo import reset, disable, allow_in_graph  # noqa: F401


def is_compiling():
    import _dyn

    return _dyn._in_region() if hasattr(_dyn, "_in_region") else False


def is_dynamo_compiling():
    return is_compiling()
