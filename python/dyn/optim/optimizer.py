"""The Optimizer base class of dyn.optim (torch.optim.optimizer) and the helpers every update uses.

State is allocated when a parameter is added, and step counts are float64 tensors (as PyTorch's
capturable optimizers keep them): inside a compiled training step, step 2 replays step 1's trace
instead of recompiling because state appeared, and no changing Python number is baked into the graph.
Updates follow the float order of PyTorch's single-tensor CPU path; see Note [float order].
"""
import math
import warnings
from collections import defaultdict

import dyn

# Note [float order]
# Each update is written with the operations, in the order, that PyTorch's single-tensor (CPU)
# implementation performs them, so values agree to the last bit where dyn's kernels round as
# PyTorch's do. PyTorch's fused helpers are composed here as their CPU kernels evaluate them:
#   t.addcmul_(a, b, value=v)  ->  t + (v * a) * b        (_addcmul_)
#   t.addcdiv_(a, b, value=v)  ->  t + (v * a) / b        (_addcdiv_)
#   t.lerp_(end, w)            ->  t + w * (end - t)  if |w| < 0.5,  else  end - (end - t) * (1 - w)
#   t.add_(o, alpha=a)         ->  t + a * o
# A Python scalar meets a tensor rounded to the tensor's dtype (as PyTorch's CPU kernels do), and
# scalars PyTorch computes in Python doubles (bias corrections, Adagrad's decayed lr) are computed
# here as float64 0-dim tensors from the float64 step count, which rounds identically.
# Known differences: PyTorch's vectorized CPU kernels for add(alpha=), addcmul and lerp may use a
# fused multiply-add (one rounding where dyn rounds twice), depending on the CPU and build; LBFGS's
# dot products are (a * b).sum(), whose summation order differs from BLAS dot.


def _addcmul_(t, a, b, value):
    return t.add_((a * value) * b)


def _addcdiv_(t, a, b, value):
    return t.add_((a * value) / b)


def _lerp_(t, end, weight):
    if abs(weight) < 0.5:
        return t.add_((end - t) * weight)
    one_minus = 1 - dyn.full((), weight, dtype=t.dtype)  # 1 - w in t's dtype, as PyTorch's kernel
    return t.copy_(end - (end - t) * one_minus)


def _step_count():
    return dyn.zeros((), dtype=dyn.float64)


def _pow_of_step(base, step):
    """base ** step as PyTorch's Adam computes it, in Python (C pow). dyn's pow kernel, like PyTorch's
    tensor pow, takes x**3 as x*x*x, which can round differently; base is a constant, so its cube is too."""
    return dyn.where(step == 3, dyn.full((), base ** 3.0, dtype=dyn.float64), base ** step)


class _RequiredParameter:
    """Marks a hyperparameter every parameter group must give (torch.optim.optimizer.required)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: param_groups (dicts with 'params' and hyperparameters) and per-parameter state."""

    # PyTorch makes most optimizers' state at the first step, so a state_dict taken before a
    # parameter's first update omits it; Adagrad makes its state in the constructor.
    _state_made_at_first_step = True

    def __init__(self, params, defaults):
        if isinstance(params, dyn.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got a Tensor; wrap it in a list: [tensor]")
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Adds a group (a dict with 'params'); hyperparameters it leaves out take the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, dyn.Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        tensors, names = [], []
        for p in params:
            if isinstance(p, tuple):  # (name, tensor), as model.named_parameters() yields
                names.append(p[0])
                p = p[1]
            tensors.append(p)
        if names and len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        for p in tensors:
            if not isinstance(p, dyn.Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor; optimize the leaf it was computed from, "
                                 "or use .detach().requires_grad_()")
        param_group["params"] = tensors
        if names:
            param_group["param_names"] = names
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error", stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
        with dyn.no_grad():
            for p in tensors:
                self._state_for(p, param_group)

    def _init_state(self, p, group):
        """The state of a parameter before its first update ({} for none)."""
        return {}

    def _state_for(self, p, group):
        # Made when the parameter is added; made again if emptied (a load without its state) or if
        # a hyperparameter that needs state was switched on later (SGD's momentum under OneCycleLR).
        state = self.state.get(p)
        if not state:
            state = self._init_state(p, group)
            if state:
                self.state[p] = state
        return state

    def zero_grad(self, set_to_none=True):
        """Sets every parameter's .grad to None (or, with set_to_none=False, to zeros)."""
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a .grad. Returns closure()'s loss if given a closure."""
        loss = None
        if closure is not None:
            with dyn.enable_grad():
                loss = closure()
        with dyn.no_grad():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is not None:
                        self._update(p, p.grad, self._state_for(p, g), g)
        return loss

    def _update(self, p, grad, state, group):
        raise NotImplementedError(f"{type(self).__name__} does not implement an update")

    def _has_state(self, state):
        if not state:
            return False
        step = state.get("step")
        return not (self._state_made_at_first_step and isinstance(step, dyn.Tensor) and step.item() == 0)

    def state_dict(self):
        """PyTorch's layout: {'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}.

        Like PyTorch's, the state's tensors are the optimizer's own (not copies).
        """
        index, groups = {}, []
        for g in self.param_groups:
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            groups.append(dict({k: v for k, v in g.items() if k != "params"},
                               params=[index[id(p)] for p in g["params"]]))
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                s = self.state.get(p)
                if index[id(p)] not in state and self._has_state(s):
                    state[index[id(p)]] = dict(s)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Loads hyperparameters and state saved by state_dict(), matching parameters by position."""
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, sg in zip(self.param_groups, saved):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
        for g, sg in zip(self.param_groups, saved):
            params = g["params"]
            names = g.get("param_names")
            g.clear()
            g.update({k: v for k, v in sg.items() if k != "params"})
            g["params"] = params
            if names is not None and "param_names" not in g:
                g["param_names"] = names
            for k, v in self.defaults.items():  # a group saved before a hyperparameter existed
                g.setdefault(k, v)
        with dyn.no_grad():
            for g, sg in zip(self.param_groups, saved):
                for p, i in zip(g["params"], sg["params"]):
                    self._load_param_state(p, g, state_dict["state"].get(i))

    def _load_param_state(self, p, group, loaded):
        # The optimizer keeps its own state tensors (a compiled step's graph refers to them) and
        # copies loaded values into them; what the loaded state lacks starts fresh.
        current = self.state.get(p, {})
        target = dict(self._init_state(p, group))
        target.update({k: v for k, v in (loaded or {}).items() if v is not None})
        self._complete_loaded(target, loaded or {})
        new = {}
        for k, v in target.items():
            old = current.get(k)
            if isinstance(old, dyn.Tensor) and isinstance(v, dyn.Tensor) and old.shape == v.shape:
                new[k] = old.copy_(v)
            elif isinstance(old, dyn.Tensor) and isinstance(v, (int, float)) and old.dim() == 0:
                new[k] = old.fill_(v)  # a step saved as a Python number
            elif isinstance(v, dyn.Tensor):
                dtype = dyn.float64 if k == "step" else (p.dtype if v.dtype.is_floating_point else v.dtype)
                new[k] = v.detach().to(dtype).clone()
            else:
                new[k] = list(v) if isinstance(v, list) else v  # LBFGS edits its history lists in place
        self.state.pop(p, None)
        if new:
            self.state[p] = new

    def _complete_loaded(self, target, loaded):
        """Fills in state a loaded dict may lack (PyTorch's SGD saves no step count)."""

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"


def _check(ok, what, value):
    if not ok:
        raise ValueError(f"Invalid {what}: {value}")


def _check_lr(lr):
    # A 0-dim tensor lr (as PyTorch allows) is read by a compiled step as data, so a scheduler's
    # changes to it replay the same graph; a Python float is a constant, and a new value recompiles.
    if isinstance(lr, dyn.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check(lr >= 0, "learning rate", lr)


def _check_nonnegative(**values):
    """Each keyword is the name PyTorch's message gives the value ('Invalid epsilon value: -1'); checked in order."""
    for name, value in values.items():
        _check(value >= 0, f"{name} value", value)


def _no_differentiable(differentiable):
    if differentiable:
        raise NotImplementedError("dyn.optim has no differentiable optimizers; pass differentiable=False")


def _adam_prologue(p, grad, state, g):
    """What Adam and its kind (AdamW, NAdam, RAdam) do first: maximize, count the step, and weight
    decay: decoupled, the parameter shrinks by lr * weight_decay; else an L2 term in the gradient."""
    if g["maximize"]:
        grad = -grad
    state["step"].add_(1)
    wd = g["weight_decay"]
    if wd != 0:
        if g["decoupled_weight_decay"]:
            p.mul_(1 - g["lr"] * wd)
        else:
            grad = grad.add(p, alpha=wd)
    return grad
