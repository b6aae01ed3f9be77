"""dyn.autograd (torch.autograd): backward, grad, custom Functions and grad modes."""
import weakref

import _dyn
from _dyn import Tensor

from .. import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradients of tensors (a tensor or a sequence) into the leaves' .grad (only
    into the .grad of `inputs` when given). create_graph: the gradients have history of their own."""
    ts = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    gs = [grad_tensors] if isinstance(grad_tensors, Tensor) or grad_tensors is None else list(grad_tensors)
    if grad_tensors is None:
        gs = [None] * len(ts)
    if retain_graph is None:
        retain_graph = create_graph
    for i, (t, g) in enumerate(zip(ts, gs)):
        keep = bool(retain_graph) or i + 1 < len(ts)
        t.backward(g, retain_graph=keep, create_graph=create_graph, inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs, returned; no tensor's .grad changes.

    dyn computes them with backward(inputs=...), which gives only the inputs their gradient (a
    non-leaf's as retain_grad would), and puts every .grad back as it was."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) (vmap over grad_outputs) is not supported "
                                  "by dyn; call grad once per grad_outputs row")
    single = isinstance(inputs, Tensor)
    ins = [inputs] if single else list(inputs)
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    for i, x in enumerate(ins):
        if not x.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")
    for o in outs:
        if not o.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    saved = [x.grad for x in ins]
    for x in ins:
        x.grad = None
    result = [None] * len(ins)
    try:
        backward(outs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph, inputs=ins)
        result = [x.grad for x in ins]
    finally:
        for x, g in zip(ins, saved):
            x.grad = g
    for i, r in enumerate(result):
        if r is None and not allow_unused and not materialize_grads:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                               "Set allow_unused=True if this is the desired behavior.")
        if r is None and materialize_grads:
            result[i] = _dyn.zeros_like(ins[i])
    return tuple(result)


class FunctionCtx:
    """The ctx of a custom Function: what forward saves for backward."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self.saved_tensors = tuple(tensors)

    def mark_dirty(self, *tensors):
        pass

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class Function:
    """torch.autograd.Function: subclass with static forward(ctx, ...) and backward(ctx, *grads),
    call with Cls.apply(...). forward runs without recording; backward gives one gradient (or None)
    per argument of forward."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        separate = cls.setup_context is not Function.setup_context
        with no_grad():
            out = cls.forward(*args, **kwargs) if separate else cls.forward(ctx, *args, **kwargs)
        if separate:
            cls.setup_context(ctx, args, out)
        outs = out if isinstance(out, tuple) else (out,)
        # An output that is an input unchanged would get this node as its grad_fn: give it a copy.
        ids = {id(a) for a in args if isinstance(a, Tensor)}
        outs = tuple(o.detach().clone() if isinstance(o, Tensor) and (id(o) in ids or o.requires_grad) else o
                     for o in outs)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensor_outs = [o for o in outs if isinstance(o, Tensor)]
        # run_backward is owned by the outputs' grad node, a C++ object that Python's collector cannot
        # see through: if it (or ctx) held an output, output -> node -> closure -> output would be a
        # cycle never freed. So it keeps the outputs' metadata only, and saved outputs become detached
        # aliases, which is how the engine saves its own ops' outputs.
        out_meta = [(o.shape, o.dtype) for o in tensor_outs]
        out_ids = {id(o) for o in tensor_outs}
        ctx.saved_tensors = tuple(t.detach() if isinstance(t, Tensor) and id(t) in out_ids else t
                                  for t in ctx.saved_tensors)
        n_args = len(args)

        def run_backward(*grads):
            if ctx.materialize_grads:
                grads = tuple(_dyn.zeros(shape, dtype=dtype) if g is None else g
                              for g, (shape, dtype) in zip(grads, out_meta))
            r = cls.backward(ctx, *grads)
            r = r if isinstance(r, tuple) else (r,)
            if len(r) < n_args:
                raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                                   f"(expected {n_args}, got {len(r)})")
            return tuple(r[i] for i in positions)

        _dyn._custom_grad([args[i] for i in positions], tensor_outs, getattr(cls, "node_name", cls.__name__ + "Backward"),
                           run_backward)
        return outs if isinstance(out, tuple) else outs[0]


def Variable(tensor, requires_grad=False, volatile=False):
    """The pre-0.4 wrapper: today a tensor is its own Variable."""
    if requires_grad and not tensor.requires_grad:
        tensor.requires_grad_(True)
    return tensor


class detect_anomaly:
    """Accepted for compatibility: dyn reports the failing op without anomaly mode."""

    def __init__(self, check_nan=True):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def set_detect_anomaly(mode, check_nan=True):
    return detect_anomaly()


class graph:
    """torch.autograd.graph: saved-tensor hooks are not supported."""


# ---- tensor hooks: Tensor.register_hook, retain_grad, retains_grad ----


class RemovableHandle:
    """What register_hook returns: remove() takes the hook off again (torch.utils.hooks.RemovableHandle)."""

    def __init__(self, tensor, hook_id):
        self._tensor = weakref.ref(tensor)
        self.id = hook_id

    def remove(self):
        t = self._tensor()
        if t is not None:
            _dyn._remove_grad_hook(t, self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _register_hook(self, hook):
    """Runs hook(grad) each time backward() computes this tensor's gradient (a leaf's before it
    accumulates into .grad); a tensor it returns replaces the gradient. Returns a handle whose
    remove() takes the hook off."""
    return RemovableHandle(self, _dyn._add_grad_hook(self, hook))


def _retain_grad(self):
    """Keeps this non-leaf tensor's gradient in its .grad at backward() (a leaf's is kept anyway)."""
    _dyn._retain_grad(self)


def _backward_hooks(self):
    ids = _dyn._grad_hook_ids(self)
    return {i: None for i in ids} or None


_dyn._add_tensor_methods({
    "register_hook": _register_hook,
    "retain_grad": _retain_grad,
    "retains_grad": property(lambda self: _dyn._retains_grad(self), doc="retain_grad() was called on this non-leaf"),
    "_backward_hooks": property(_backward_hooks, doc="the ids of the gradient hooks, or None (PyTorch's dict)"),
})


from . import functional  # noqa: E402,F401  (torch.autograd.functional; needs grad above)
