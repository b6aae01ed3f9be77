"""dyn.optim: SGD, Adam and AdamW with PyTorch's update rules.

State is allocated when the optimizer is made, and the step count is a tensor (as PyTorch's
capturable optimizers do): inside a compiled training step, step 2 replays step 1's trace instead
of recompiling because state appeared, and no changing Python number is baked into the graph.
"""
import dyn


class Optimizer:
    def __init__(self, params, defaults):
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if isinstance(params[0], dict):
            groups = [dict(defaults, **g) for g in params]
        else:
            groups = [dict(defaults, params=params)]
        for g in groups:
            g["params"] = list(g["params"])
            for p in g["params"]:
                if not isinstance(p, dyn.Tensor):
                    raise TypeError(f"optimizer can only optimize Tensors, got {type(p).__name__}")
        self.param_groups = groups
        self.defaults = defaults
        self.state = {}
        with dyn.no_grad():
            for g in self.param_groups:
                for p in g["params"]:
                    self.state[p] = self._init_state(p, g)

    def _init_state(self, p, group):
        return {}

    def zero_grad(self, set_to_none=True):
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.zero_()

    def step(self):
        with dyn.no_grad():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is not None:
                        self._update(p, p.grad, self.state[p], g)

    def state_dict(self):
        index = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append(dict({k: v for k, v in g.items() if k != "params"}, params=ids))
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                state[index[id(p)]] = {k: (v.clone() if isinstance(v, dyn.Tensor) else v) for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, sd):
        params = [p for g in self.param_groups for p in g["params"]]
        if len(sd["param_groups"]) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        with dyn.no_grad():
            for i, p in enumerate(params):
                for k, v in sd["state"].get(i, {}).items():
                    if isinstance(v, dyn.Tensor):
                        self.state[p][k].copy_(v)
                    else:
                        self.state[p][k] = v
        for g, sg in zip(self.param_groups, sd["param_groups"]):
            for k, v in sg.items():
                if k != "params":
                    g[k] = v

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"invalid SGD hyperparameters: lr={lr}, momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov))

    def _init_state(self, p, g):
        if g["momentum"] == 0:
            return {}
        return {"momentum_buffer": dyn.zeros_like(p), "step": dyn.zeros((), dtype=p.dtype)}

    def _update(self, p, grad, state, g):
        d_p = grad
        if g["weight_decay"] != 0:
            d_p = d_p + p * g["weight_decay"]
        if g["momentum"] != 0:
            buf, step = state["momentum_buffer"], state["step"]
            # PyTorch's first step takes the gradient as the buffer; later ones decay it. Both as
            # tensor ops, so the first step's trace serves every step.
            later = buf * g["momentum"] + d_p * (1 - g["dampening"])
            buf.copy_(dyn.where(step > 0, later, d_p))
            step.add_(1)
            d_p = d_p + buf * g["momentum"] if g["nesterov"] else buf
        p.sub_(d_p * g["lr"])


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        if lr < 0 or eps < 0 or not (0 <= betas[0] < 1 and 0 <= betas[1] < 1) or weight_decay < 0:
            raise ValueError(f"invalid Adam hyperparameters: lr={lr}, betas={betas}, eps={eps}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    def _init_state(self, p, g):
        return {"step": dyn.zeros((), dtype=p.dtype), "exp_avg": dyn.zeros_like(p), "exp_avg_sq": dyn.zeros_like(p)}

    def _decay(self, p, grad, g):
        # Adam: L2 penalty added to the gradient
        return grad + p * g["weight_decay"] if g["weight_decay"] != 0 else grad

    def _update(self, p, grad, state, g):
        beta1, beta2 = g["betas"]
        step, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        grad = self._decay(p, grad, g)
        step.add_(1)
        m.mul_(beta1).add_(grad, alpha=1 - beta1)
        v.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = g["lr"] / bias_correction1
        denom = (v.sqrt() / bias_correction2.sqrt()) + g["eps"]
        p.sub_(step_size * (m / denom))


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def _decay(self, p, grad, g):
        # AdamW: decoupled weight decay, applied to the parameter itself
        if g["weight_decay"] != 0:
            p.mul_(1 - g["lr"] * g["weight_decay"])
        return grad
