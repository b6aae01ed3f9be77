"""Fuzz tier 2 (trace once) on training steps whose Python state changes between calls.

Each program is a random training step (forward, loss, backward, an optimizer's step, zero_grad
before, after or not at all, a result of a random kind) over a random small model and optimizer,
compiled whole or only its model's forward (torch.compile(model): the results keep their autograd
history, and backward() and the update run outside).
Two replicas of it start from the same seed: one runs the step eagerly, the other compiled
(lifting on). Between calls a random set of state changes on both alike: the learning rate and
other hyperparameters, the training flag, frozen or unfrozen parameters, a .grad set to None or
scaled from outside, a parameter's values or object, the batch size, grad mode. After each call
the results, every parameter, every .grad and every optimizer state tensor of the two replicas
must be the same, bit for bit; with --verify every lifted hit is also checked against the body
(dyn.LiftMismatch).

Run: build/repl/dynrepl --batch tests/fuzz/train_state.py [--programs N] [--seed S] [--verify]
"""
import os
import random
import sys

import dyn
import dyn.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _lift_runner  # noqa: E402

OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("Adagrad", dict(lr=0.1)),
]


def make_model(rng, width):
    layers = [nn.Linear(width, 8)]
    if rng.random() < 0.4:
        layers.append(nn.LayerNorm(8))
    layers.append(rng.choice([nn.ReLU, nn.Tanh, nn.GELU])())
    if rng.random() < 0.3:
        layers.append(nn.Dropout(0.0))  # the training flag is read, no random numbers drawn
    layers.append(nn.Linear(8, 3))
    return nn.Sequential(*layers)


def make_step(form, model, opt, loss_kind, forward=None):
    """The step as a user writes it; form picks where zero_grad goes and what it returns. forward:
    the model as called (a compiled model, when only the forward is compiled)."""
    forward = forward or model

    def loss_of(x, y):
        out = forward(x)
        if loss_kind == "ce":
            return dyn.nn.functional.cross_entropy(out, y), out
        return ((out - y.float().unsqueeze(-1)) ** 2).mean(), out

    def step(x, y):
        if form["zero"] == "first":
            opt.zero_grad(set_to_none=form["none"])
        loss, out = loss_of(x, y)
        loss.backward()
        opt.step()
        if form["zero"] == "last":
            opt.zero_grad(set_to_none=form["none"])
        if form["ret"] == "loss":
            return loss
        if form["ret"] == "detached":
            return loss.detach()
        if form["ret"] == "pair":
            return loss.detach(), out.detach().argmax(-1)
        return None
    return step


def mutations():
    """(name, a draw of the new value, its application to a replica): both replicas get one value."""
    return [
        ("lr", lambda g: g.choice([0.1, 0.01, 0.05]),
         lambda r, v: [grp.__setitem__("lr", v) for grp in r.opt.param_groups]),
        ("weight_decay", lambda g: g.choice([0.0, 0.01]),
         lambda r, v: [grp.__setitem__("weight_decay", v) for grp in r.opt.param_groups if "weight_decay" in grp]),
        ("train", lambda g: g.random() < 0.5, lambda r, v: r.model.train(v)),
        ("freeze", None, lambda r, v: r.model[0].weight.requires_grad_(False)),
        ("unfreeze", None, lambda r, v: r.model[0].weight.requires_grad_(True)),
        ("grad none", None, lambda r, v: setattr(r.model[-1].bias, "grad", None)),
        ("grad scale", None, lambda r, v: _no_grad(lambda: r.model[-1].weight.grad.mul_(0.5))
         if r.model[-1].weight.grad is not None else None),
        ("param values", None, lambda r, v: _no_grad(lambda: r.model[-1].weight.add_(0.125))),
        ("param object", None, lambda r, v: setattr(r.model[-1], "bias", nn.Parameter(dyn.zeros(3)))),
        ("batch", None, None),  # the batch size changes (below)
        ("grad mode", None, None),  # the call runs under no_grad: backward() raises in both
    ]


def _no_grad(fn):
    with dyn.no_grad():
        fn()


class Replica:
    def __init__(self, seed, rng_state, width, opt_choice, form, loss_kind, compiled, verify):
        rng = random.Random()
        rng.setstate(rng_state)
        dyn.manual_seed(seed)
        self.model = make_model(rng, width)
        name, kw = opt_choice
        self.opt = getattr(dyn.optim, name)(self.model.parameters(), **kw)
        if form["compiled"] == "forward":  # torch.compile(model): backward and the update outside
            self.compiled = dyn.compile(self.model, verify=verify, cache_limit=64) if compiled else None
            self.step = make_step(form, self.model, self.opt, loss_kind, self.compiled)
        else:
            step = make_step(form, self.model, self.opt, loss_kind)
            self.step = self.compiled = dyn.compile(step, verify=verify, cache_limit=64) if compiled else step

    def state(self):
        out = []
        for p in self.model.parameters():
            out.append(p)
            out.append(p.grad)
        for p in self.model.parameters():
            for k, v in sorted(self.opt.state.get(p, {}).items()):
                out.append(v)
        return out


def same(a, b):
    if isinstance(a, dyn.Tensor):
        return isinstance(b, dyn.Tensor) and a.dtype == b.dtype and list(a.shape) == list(b.shape) and \
            a.requires_grad == b.requires_grad and a.detach().numpy().tobytes() == b.detach().numpy().tobytes()
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except dyn.LiftMismatch:
        raise
    except Exception as e:  # noqa: BLE001 - both replicas must raise the same
        return "raised", f"{type(e).__name__}: {e}"


def run_program(index, seed, verify, show=False):
    rng = random.Random(seed * 1_000_003 + index)
    width = rng.choice([4, 5])
    opt_choice = rng.choice(OPTIMIZERS)
    form = {"zero": rng.choice(["first", "first", "last", "none"]), "none": rng.random() < 0.7,
            "ret": rng.choice(["loss", "loss", "detached", "pair", "none"]),
            "compiled": rng.choice(["step", "step", "forward"])}
    loss_kind = rng.choice(["ce", "mse"])
    if show:
        print(f"optimizer {opt_choice}, step {form}, loss {loss_kind}, width {width}")
    st = rng.getstate()
    eager = Replica(index, st, width, opt_choice, form, loss_kind, False, verify)
    comp = Replica(index, st, width, opt_choice, form, loss_kind, True, verify)
    muts = mutations()
    batch, log, problems = 6, [], []
    for call in range(rng.randint(4, 14)):
        nograd = False
        for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
            name, draw, apply = rng.choice(muts)
            log.append(name)
            if name == "batch":
                batch = rng.choice([6, 6, 7])
            elif name == "grad mode":
                nograd = True
            else:
                v = draw(rng) if draw else None
                apply(eager, v)
                apply(comp, v)
        x = dyn.randn(batch, width)
        y = dyn.randint(0, 3, (batch,))
        ctx = dyn.no_grad() if nograd else dyn.enable_grad()
        with ctx:
            want = outcome(eager.step, x, y)
            try:
                got = outcome(comp.step, x, y)
            except dyn.LiftMismatch as e:
                problems.append(f"call {call} after {log[-3:]}: {e}")
                break
        if want[0] != got[0] or (want[0] == "raised" and want[1].split(":")[0] != got[1].split(":")[0]):
            problems.append(f"call {call} after {log[-3:]}: compiled {got} where eager gave {want}")
            break
        if want[0] == "ok" and not same(got[1], want[1]):
            problems.append(f"call {call} after {log[-3:]}: compiled returned {got[1]!r} where eager gave {want[1]!r}")
            break
        a, b = eager.state(), comp.state()
        if not same(b, a):
            bad = next(i for i, (u, v) in enumerate(zip(a, b)) if not same(v, u)) if len(a) == len(b) else -1
            problems.append(f"call {call} after {log[-3:]}: parameters, .grad or optimizer state differ "
                            f"(item {bad} of {len(a)})")
            break
    st = comp.compiled._state
    return problems, st.lifted_hits + comp.compiled._verified, st.calls, comp.compiled


if __name__ == "__main__":
    _lift_runner.main(run_program, "train_state.py", 100, "its choices")
