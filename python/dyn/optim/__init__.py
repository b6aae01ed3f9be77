"""dyn.optim: PyTorch's optimizers (SGD, Adam, AdamW, Adadelta, Adagrad, RMSprop, LBFGS) and their state.

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


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (Nesterov or heavy-ball), dampening and L2 decay."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonnegative(momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _init_state(self, p, g):
        if g["momentum"] == 0:
            return {}
        return {"momentum_buffer": dyn.zeros_like(p), "step": _step_count()}

    def _complete_loaded(self, target, loaded):
        if "momentum_buffer" in loaded and "step" not in loaded and loaded["momentum_buffer"] is not None:
            target["step"] = dyn.ones((), dtype=dyn.float64)  # the buffer is live: later steps decay it

    def _update(self, p, grad, state, g):
        if g["maximize"]:
            grad = -grad
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        if g["momentum"] != 0:
            buf, step = state["momentum_buffer"], state["step"]
            # PyTorch's first step takes the gradient as the buffer; later ones decay it. Both as
            # tensor ops, so the first step's trace serves every step.
            later = (buf * g["momentum"]).add(grad, alpha=1 - g["dampening"])
            buf.copy_(dyn.where(step > 0, later, grad))
            step.add_(1)
            grad = grad.add(buf, alpha=g["momentum"]) if g["nesterov"] else buf
        p.add_(grad * -g["lr"])  # = add(alpha=-lr); lr may be a tensor


class Adam(Optimizer):
    """Adam (and AMSGrad); weight_decay is an L2 penalty unless decoupled_weight_decay (AdamW)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_lr(lr)
        _check_nonnegative(epsilon=eps)
        _check(0 <= betas[0] < 1, "beta parameter at index 0", betas[0])
        _check(0 <= betas[1] < 1, "beta parameter at index 1", betas[1])
        _check_nonnegative(weight_decay=weight_decay)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_state(self, p, g):
        state = {"step": _step_count(), "exp_avg": dyn.zeros_like(p), "exp_avg_sq": dyn.zeros_like(p)}
        if g["amsgrad"]:
            state["max_exp_avg_sq"] = dyn.zeros_like(p)
        return state

    def _update(self, p, grad, state, g):
        beta1, beta2 = g["betas"]
        lr, wd = g["lr"], g["weight_decay"]
        step, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        if g["maximize"]:
            grad = -grad
        step.add_(1)
        if wd != 0:
            if g["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)  # AdamW: decay the parameter itself
            else:
                grad = grad.add(p, alpha=wd)  # Adam: L2 penalty in the gradient
        _lerp_(m, grad, 1 - beta1)
        _addcmul_(v.mul_(beta2), grad, grad, 1 - beta2)
        bias_correction1 = 1 - _pow_of_step(beta1, step)
        bias_correction2 = 1 - _pow_of_step(beta2, step)
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if g["amsgrad"]:
            v = state["max_exp_avg_sq"].copy_(dyn.maximum(state["max_exp_avg_sq"], v))
        denom = (v.sqrt() / bias_correction2_sqrt).add_(g["eps"])
        _addcdiv_(p, m, denom, -step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay: the parameter itself shrinks by lr * weight_decay each step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)


class Adadelta(Optimizer):
    """Adadelta: steps scaled by running RMS of past updates over running RMS of gradients."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0 <= rho <= 1, "rho value", rho)
        _check_nonnegative(epsilon=eps, weight_decay=weight_decay)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _init_state(self, p, g):
        return {"step": _step_count(), "square_avg": dyn.zeros_like(p), "acc_delta": dyn.zeros_like(p)}

    def _update(self, p, grad, state, g):
        rho, eps = g["rho"], g["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        state["step"].add_(1)
        if g["maximize"]:
            grad = -grad
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        _addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
        std = square_avg.add(eps).sqrt()
        delta = acc_delta.add(eps).sqrt().div_(std).mul_(grad)
        _addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
        p.add_(delta * -g["lr"])


class Adagrad(Optimizer):
    """Adagrad: steps divided by the root of the summed squared gradients, with lr / (1 + (t - 1) lr_decay)."""

    _state_made_at_first_step = False

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonnegative(lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))

    def _init_state(self, p, g):
        # PyTorch fills every group's sum with the constructor's initial_accumulator_value.
        return {"step": _step_count(), "sum": dyn.full_like(p, self.defaults["initial_accumulator_value"])}

    def _update(self, p, grad, state, g):
        step, state_sum = state["step"], state["sum"]
        step.add_(1)
        if g["maximize"]:
            grad = -grad
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        clr = g["lr"] / (1 + (step - 1) * g["lr_decay"])
        _addcmul_(state_sum, grad, grad, 1)
        std = state_sum.sqrt().add_(g["eps"])
        _addcdiv_(p, grad, std, -clr)


class RMSprop(Optimizer):
    """RMSprop: steps divided by a running RMS of gradients (centered: of their deviation), optional momentum."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check_nonnegative(epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _init_state(self, p, g):
        state = {"step": _step_count(), "square_avg": dyn.zeros_like(p)}
        if g["momentum"] > 0:
            state["momentum_buffer"] = dyn.zeros_like(p)
        if g["centered"]:
            state["grad_avg"] = dyn.zeros_like(p)
        return state

    def _update(self, p, grad, state, g):
        alpha, square_avg = g["alpha"], state["square_avg"]
        if g["maximize"]:
            grad = -grad
        state["step"].add_(1)
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        _addcmul_(square_avg.mul_(alpha), grad, grad, 1 - alpha)
        if g["centered"]:
            grad_avg = _lerp_(state["grad_avg"], grad, 1 - alpha)
            avg = (square_avg - grad_avg * grad_avg).sqrt()  # = addcmul(value=-1): the negation is exact
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(g["eps"])
        if g["momentum"] > 0:
            buf = _addcdiv_(state["momentum_buffer"].mul_(g["momentum"]), grad, avg, 1)
            p.add_(buf * -g["lr"])
        else:
            _addcdiv_(p, grad, avg, -g["lr"])


# ---- L-BFGS ----
# Note [LBFGS values] Scalars keep PyTorch's types: losses are Python floats, directional
# derivatives and curvature terms 0-dim tensors in the parameters' dtype, step lengths whichever of
# the two the arithmetic produces, so float32 problems round as PyTorch's do.


def _dot(a, b):
    return (a * b).sum()


def _sqrt(x):
    return x.sqrt() if isinstance(x, dyn.Tensor) else math.sqrt(x)


def _cubic_minimizer(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic through (x1, f1, slope g1) and (x2, f2, slope g2), clamped to bounds."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0  # no real minimizer: bisect
    d2 = _sqrt(d2_square)
    if x1 <= x2:
        t = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        t = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(t, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along d for a step t meeting the strong Wolfe conditions (minFunc's bracket-and-zoom).

    evaluate(t) -> (loss, flat gradient) at x + t d. Returns (loss, gradient, t, evaluations).
    """
    d_norm = d.abs().amax()
    g = g.clone()
    f_new, g_new = evaluate(t)
    evals, ls_iter = 1, 0
    gtd_new = _dot(g_new, d)
    # Bracketing: grow t until an interval [t_prev, t] must hold an acceptable step.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    bracket = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = [[t, f_new, g_new, gtd_new]], True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        t_next = _cubic_minimizer(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                  bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]
    # Zoom: shrink the bracket (entries are [t, f, grad, gtd]) until its low end is acceptable.
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        (t_a, f_a, _, gtd_a), (t_b, f_b, _, gtd_b) = bracket
        if abs(t_b - t_a) * d_norm < tolerance_change:
            break
        t = _cubic_minimizer(t_a, f_a, gtd_a, t_b, f_b, gtd_b)
        # Too close to an end of the bracket twice running (or outside it): step 0.1 of its width in.
        b_max, b_min = max(t_a, t_b), min(t_a, t_b)
        eps = 0.1 * (b_max - b_min)
        if min(b_max - t, t - b_min) < eps:
            if insufficient_progress or t >= b_max or t <= b_min:
                t = b_max - eps if abs(t - b_max) < abs(t - b_min) else b_min + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new.clone(), gtd_new]  # not low enough: new high end
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]  # the old low end becomes the high end
            bracket[low] = [t, f_new, g_new.clone(), gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """L-BFGS (PyTorch's, after minFunc). One parameter group; step(closure) runs up to max_iter iterations."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"only 'strong_wolfe' is supported as line_search_fn, got {line_search_fn!r}")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        return dyn.cat([p.grad.reshape(-1) if p.grad is not None else dyn.zeros(p.numel(), dtype=p.dtype)
                        for p in self._params])

    def _move(self, t, d):
        """params += t * d (d flat)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].reshape(p.shape) * t)
            offset += n

    def _evaluate_at(self, closure, x, t, d):
        self._move(t, d)
        loss = float(closure())
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    def step(self, closure):
        """Runs L-BFGS iterations; closure() must zero the grads, compute the loss, backward() and return it."""
        closure = dyn.enable_grad()(closure)
        with dyn.no_grad():
            return self._iterate(closure)

    def _iterate(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        # LBFGS's state is global; PyTorch keeps it as the first parameter's.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().amax() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # Direction: steepest descent first, then the two-loop recursion over the history.
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)
                al = state.setdefault("al", [None] * history_size)
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q.add_(old_dirs[i] * -al[i])
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    r.add_(old_stps[i] * (al[i] - be_i))
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # Step length: the first iteration scales by the gradient's L1 norm.
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:
                break
            ls_func_evals = 0
            if group["line_search_fn"] is not None:
                x_init = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda step: self._evaluate_at(closure, x_init, step, d), t, d, loss, flat_grad, gtd)
                self._move(t, d)
                opt_cond = flat_grad.abs().amax() <= tolerance_grad
            else:
                self._move(t, d)
                if n_iter != max_iter:  # the last iteration's loss is not needed
                    loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().amax() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().amax() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break  # no progress

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


from . import lr_scheduler  # noqa: E402,F401
