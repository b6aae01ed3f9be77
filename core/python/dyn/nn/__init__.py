"""dyn.nn: neural-network building blocks."""
from collections import OrderedDict

import dyn

from . import functional  # noqa: F401

_parameter_ids = set()


def Parameter(data, requires_grad=True):
    """A tensor registered as a module parameter when assigned to a Module attribute."""
    t = data.detach()
    t.requires_grad = requires_grad
    _parameter_ids.add(id(t))
    return t


class Module:
    """Base class of models: attributes that are Parameters or Modules are registered; call runs forward."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() is called")
        if isinstance(value, dyn.Tensor) and id(value) in _parameter_ids:
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix=""):
        for name, p in self._parameters.items():
            yield prefix + name, p
        for mname, m in self._modules.items():
            yield from m.named_parameters(prefix + mname + ".")

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def train(self, mode=True):
        self.training = mode
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)
