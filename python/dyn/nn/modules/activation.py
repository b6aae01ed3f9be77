"""Activation modules: thin wrappers of dyn.nn.functional with PyTorch's arguments and reprs."""
import dyn

from .. import Parameter
from .. import functional as F
from .attention import MultiheadAttention  # noqa: F401  (PyTorch's home for it: pickles name it)
from .module import Module, _FunctionModule


class _InplaceActivation(_FunctionModule):
    """Calls _fn(input, *the _args attributes, inplace)."""

    def forward(self, input):
        return type(self)._fn(input, *self._arg_values(), self.inplace)

    def extra_repr(self):
        shown = [super().extra_repr()] if self._args else []
        if self.inplace:  # PyTorch shows inplace only when it is set
            shown.append("inplace=True")
        return ", ".join(shown)


class ReLU(_InplaceActivation):
    _fn = staticmethod(F.relu)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class ReLU6(ReLU):
    _fn = staticmethod(F.relu6)


class LeakyReLU(_InplaceActivation):
    _fn, _args = staticmethod(F.leaky_relu), ("negative_slope",)

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace


class PReLU(Module):
    """leaky_relu with a learned slope (one, or one per channel), initialized to init."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(dyn.full((num_parameters,), init, dtype=dtype))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class ELU(_InplaceActivation):
    _fn, _args = staticmethod(F.elu), ("alpha",)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class CELU(ELU):
    _fn = staticmethod(F.celu)


class SELU(ReLU):
    _fn = staticmethod(F.selu)


class Hardtanh(_InplaceActivation):
    _fn, _args = staticmethod(F.hardtanh), ("min_val", "max_val")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"


class SiLU(ReLU):
    _fn = staticmethod(F.silu)


class Mish(ReLU):
    _fn = staticmethod(F.mish)


class Hardsigmoid(ReLU):
    _fn = staticmethod(F.hardsigmoid)


class Hardswish(ReLU):
    _fn = staticmethod(F.hardswish)


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(_FunctionModule):
    _fn, _args = staticmethod(F.softplus), ("beta", "threshold")

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold


class Threshold(_InplaceActivation):
    _fn, _args = staticmethod(F.threshold), ("threshold", "value")

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace


class _DimFunction(_FunctionModule):
    _args = ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim


class GLU(_DimFunction):
    _fn = staticmethod(F.glu)

    def __init__(self, dim=-1):
        super().__init__(dim)


class Softmax(_DimFunction):
    _fn = staticmethod(F.softmax)


class Softmin(_DimFunction):
    _fn = staticmethod(F.softmin)


class LogSoftmax(_DimFunction):
    _fn = staticmethod(F.log_softmax)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class Hardshrink(_FunctionModule):
    _fn, _args = staticmethod(F.hardshrink), ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(_FunctionModule):
    _fn, _args = staticmethod(F.softshrink), ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return str(self.lambd)


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return input.softmax(-3)
