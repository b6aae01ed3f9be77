"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of a Python function,
computed with autograd.grad (a jvp as the vjp of a vjp; a Jacobian one output element at a time;
a Hessian as the Jacobian of the gradient). Inputs and results keep PyTorch's structure: a tensor
for a tensor, a tuple for a tuple."""
import _dyn
from _dyn import Tensor

from . import grad as _grad
from .. import enable_grad


def _as_tuple(x, what, fn):
    if isinstance(x, Tensor):
        return False, (x,)
    if isinstance(x, tuple) and all(isinstance(t, Tensor) for t in x):
        return True, x
    raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the given {what} "
                    f"has type {type(x)}.")


def _prepare(inputs, fn, create_graph):
    """Inputs that require grad, fresh: the function is differentiated with respect to them only."""
    is_tuple, ins = _as_tuple(inputs, "inputs", fn)
    return is_tuple, tuple(x.detach().requires_grad_(True) if not create_graph or not x.requires_grad else
                           x.view_as(x) for x in ins)


def _call(func, ins, fn):
    out = func(*ins)
    is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn)
    return is_tuple, outs


def _grads(outputs, inputs, grad_outputs, create_graph, strict, fn):
    needed = [o for o in outputs if o.requires_grad]
    if not needed:
        gs = [None] * len(inputs)
    else:
        gos = [g for o, g in zip(outputs, grad_outputs) if o.requires_grad]
        gs = list(_grad(needed, inputs, gos, retain_graph=True, create_graph=create_graph, allow_unused=True))
    out = []
    for i, (g, x) in enumerate(zip(gs, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                                   f"not allowed in strict mode.")
            g = _dyn.zeros_like(x)
        out.append(g)
    return tuple(out)


def _values(v, like, what, fn):
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor with a single "
                               f"element.")
        return (_dyn.ones_like(like[0]),)
    _, vs = _as_tuple(v, "v", fn)
    if len(vs) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(vs)}.")
    for i, (a, b) in enumerate(zip(vs, like)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {list(b.shape)} but got "
                               f"{list(a.shape)}.")
    return vs


def _out(is_tuple, ts, create_graph):
    ts = tuple(t if create_graph else t.detach() for t in ts)
    return ts if is_tuple else ts[0]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    with enable_grad():
        in_tuple, ins = _prepare(inputs, "vjp", create_graph)
        out_tuple, outs = _call(func, ins, "vjp")
        vs = _values(v, outs, "user-provided function returns", "vjp")
        res = _grads(outs, ins, vs, create_graph, strict, "vjp")
    return _out(out_tuple, outs, create_graph), _out(in_tuple, res, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, as the vjp of a vjp (PyTorch's double-backward
    trick), so it needs no forward-mode derivatives."""
    with enable_grad():
        in_tuple, ins = _prepare(inputs, "jvp", create_graph)
        vs = _values(v, ins, "input to the user-provided function is", "jvp")
        out_tuple, outs = _call(func, ins, "jvp")
        us = tuple(_dyn.zeros_like(o).requires_grad_(True) for o in outs)
        gs = _grads(outs, ins, us, True, strict, "jvp")
        res = _grads(gs, us, vs, create_graph, strict, "jvp")
    return _out(out_tuple, outs, create_graph), _out(out_tuple, res, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """d func(inputs) / d inputs: for each output, a tensor of shape output.shape + input.shape per
    input (a tuple of them when inputs is a tuple)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise ValueError("torch.autograd.functional.jacobian: `strategy=\"forward-mode\"` is only supported "
                         "with `vectorize=True`.")
    with enable_grad():
        in_tuple, ins = _prepare(inputs, "jacobian", create_graph)
        out_tuple, outs = _call(func, ins, "jacobian")
        per_output = []
        for o in outs:
            flat = o.reshape(-1)
            rows = [[] for _ in ins]
            for k in range(flat.numel()):
                if o.requires_grad:
                    gs = _grad([flat[k]], ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
                else:
                    gs = [None] * len(ins)
                for i, (g, x) in enumerate(zip(gs, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {len(per_output)} of the user-provided function is "
                                               f"independent of input {i}. This is not allowed in strict mode.")
                        g = _dyn.zeros_like(x)
                    rows[i].append(g)
            jac = tuple(_dyn.stack(r).reshape(tuple(o.shape) + tuple(x.shape)) if r else
                        _dyn.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype) for r, x in zip(rows, ins))
            per_output.append(_out(in_tuple, jac, create_graph))
    return tuple(per_output) if out_tuple else per_output[0]


def _scalar_function(func, fn):
    def scalar(*xs):
        out = func(*xs)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn)
        if is_tuple:
            raise RuntimeError(f"The function given to {fn} should return a single Tensor")
        if outs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")
        return outs[0]
    return scalar


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient (per pair of inputs when inputs
    is a tuple)."""
    scalar = _scalar_function(func, "hessian")
    in_tuple, _ = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out = scalar(*xs)
        return _grads((out,), xs, (_dyn.ones_like(out),), True, strict, "hessian")

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return res if in_tuple else res[0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    scalar = _scalar_function(func, "vhp")
    with enable_grad():
        in_tuple, ins = _prepare(inputs, "vhp", create_graph)
        vs = _values(v, ins, "input to the user-provided function is", "vhp")
        out = scalar(*ins)
        gs = _grads((out,), ins, (_dyn.ones_like(out),), True, strict, "vhp")
        res = _grads(gs, ins, vs, create_graph, strict, "vhp")
    return _out(False, (out,), create_graph), _out(in_tuple, res, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function; H is symmetric, so it is v^T H."""
    return vhp(func, inputs, v, create_graph=create_graph, strict=strict)
