"""dyn.nn: neural-network modules with PyTorch's names, semantics and default initializations."""
import math
import weakref
from collections import OrderedDict

import _dyn
import dyn

from . import functional as F
from . import init  # noqa: F401



class Parameter(dyn.Tensor):
    """A tensor registered as a module parameter when assigned to a Module attribute (a real
    dyn.Tensor subclass, as torch.nn.Parameter: isinstance(p, nn.Parameter) holds). It shares
    data's memory; ops on it give plain tensors."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = dyn.empty(0)
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return _dyn._as_subclass(cls, t)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + dyn.Tensor.__repr__(self)

    def __reduce_ex__(self, protocol):
        return (Parameter, (self.detach(), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = Parameter(self.detach().clone(), self.requires_grad)
        return memo[id(self)]


def is_parameter(t):
    return isinstance(t, Parameter)


# The modules import Parameter and is_parameter from here: keep their definitions above this line.
from . import functional  # noqa: E402,F401
from . import init  # noqa: E402,F401
from . import parallel  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from .modules import *  # noqa: E402,F401,F403
from .modules import __all__ as _module_names  # noqa: E402

__all__ = ["Parameter", "is_parameter", "functional", "init", "utils"] + _module_names
