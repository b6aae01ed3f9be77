"""dyn.nn.init: in-place initializations, as in PyTorch (they run under no_grad)."""
import math

import dyn


def uniform_(t, a=0.0, b=1.0):
    with dyn.no_grad():
        return t.copy_(dyn.rand_like(t) * (b - a) + a)


def normal_(t, mean=0.0, std=1.0):
    with dyn.no_grad():
        return t.copy_(dyn.randn_like(t) * std + mean)


def zeros_(t):
    with dyn.no_grad():
        return t.zero_()


def ones_(t):
    with dyn.no_grad():
        return t.fill_(1.0)


def constant_(t, val):
    with dyn.no_grad():
        return t.fill_(val)


def xavier_uniform_(t, gain=1.0):
    fan_out, fan_in = t.shape[0], t.shape[1]
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)
