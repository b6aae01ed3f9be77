"""Fuzz tier 2 (trace once) against Python state that changes between calls.

Each program is a random module whose forward reads Python state of every kind a lifted entry
must guard: globals (an int loop count, a float, a string mode), module attributes (an int, a
float, the training flag), the length and members of a ModuleList, a closure cell, a default
argument, a method looked up on the instance or the class, forward hooks, a config dict, and
parameters (their values and their objects). Between calls a random set of that state changes.
Each call of the compiled module (lifting on) must return what the module returns eagerly, bit
for bit; with --verify every lifted hit is also checked against the body (dyn.LiftMismatch).

Run: build/repl/dynrepl --batch tests/fuzz/python_state.py [--programs N] [--seed S] [--verify]
"""
import os
import random
import sys
import textwrap

import dyn
import dyn.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _lift_runner  # noqa: E402

STATEMENTS = {
    "layers": "for layer in self.layers:\n    x = layer(x).tanh()",
    "loop": "for _ in range(G['n']):\n    x = x + G['f']",
    "training": "if self.training:\n    x = x * self.k",
    "helper": "x = self.helper(x)",
    "mode": "if G['mode'] == 'a':\n    x = x.relu()\nelse:\n    x = x.abs() + 0.25",
    "cell": "x = x * cell[0]",
    "default": "x = x + n",
    "scale": "x = x * self.scale",
    "cfg": "x = x * CFG['w'][0] + CFG['w'][1]",
    "head": "x = self.head(x)",
    "shape": "if x.shape[-1] == 4:\n    x = x.flip(-1)",
}


def program_source(rng):
    names = list(STATEMENTS)
    rng.shuffle(names)
    body = [STATEMENTS[n] for n in names[:rng.randint(3, len(names))]]
    if rng.random() < 0.3:
        body.append("y = x.sum(-1, keepdim=True)")
        tail = "return x, y, G['n']" if rng.random() < 0.5 else "return [x, y]"
    else:
        tail = "return x"
    lines = "\n".join(body + [tail])
    return textwrap.dedent("""
        def make(G, CFG, cell):
            class M(nn.Module):
                def __init__(self, width, depth):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
                    self.head = nn.Linear(width, width)
                    self.k = 2
                    self.scale = 0.5

                def helper(self, x):
                    return x * 1.5

                def forward(self, x, n=1):
        {body}
            return M
        """).format(body=textwrap.indent(lines, " " * 16))


def other_helper(self, x):
    return x - 0.75


MUTATIONS = [
    ("G['n']", lambda s, r: s.G.update(n=r.randint(0, 3))),
    ("G['f']", lambda s, r: s.G.update(f=r.choice([0.5, -0.25, 0.0, -0.0, 1.5]))),
    ("G['mode']", lambda s, r: s.G.update(mode=r.choice("ab"))),
    ("self.k", lambda s, r: setattr(s.model, "k", r.choice([1, 2, 3]))),
    ("self.scale", lambda s, r: setattr(s.model, "scale", r.choice([0.5, 0.75, 2.0]))),
    ("training", lambda s, r: s.model.train(r.random() < 0.5)),
    ("append layer", lambda s, r: s.model.layers.append(nn.Linear(s.width, s.width)) if len(s.model.layers) < 4
     else None),
    ("pop layer", lambda s, r: s.model.layers.__delitem__(-1) if len(s.model.layers) > 0 else None),
    ("swap layer", lambda s, r: s.model.layers.__setitem__(0, nn.Linear(s.width, s.width))
     if len(s.model.layers) else None),
    ("swap head", lambda s, r: setattr(s.model, "head", nn.Linear(s.width, s.width))),
    ("cell", lambda s, r: s.cell.__setitem__(0, r.choice([1.0, 2.5, -1.0]))),
    ("default", lambda s, r: setattr(type(s.model).forward, "__defaults__", (r.choice([1, 2, 0.5]),))),
    ("patch instance", lambda s, r: setattr(s.model, "helper", lambda x: x * 3.0)),
    ("unpatch instance", lambda s, r: s.model.__dict__.pop("helper", None)),
    ("patch class", lambda s, r: setattr(type(s.model), "helper", other_helper)),
    ("hook", lambda s, r: s.hooks.append(s.model.register_forward_hook(lambda m, a, out: out)) if len(s.hooks) < 2
     else None),
    ("unhook", lambda s, r: s.hooks.pop().remove() if s.hooks else None),
    ("cfg", lambda s, r: s.CFG.update(w=(r.choice([0.5, 1.0]), r.choice([0.0, 0.125])))),
    ("param values", lambda s, r: _no_grad(lambda: s.model.head.weight.mul_(r.choice([0.5, -1.0])))),
    ("param object", lambda s, r: setattr(s.model.head, "bias", nn.Parameter(dyn.randn(s.width)))),
    ("width", lambda s, r: None),  # the input's shape changes instead (call argument below)
]


def _no_grad(fn):
    with dyn.no_grad():
        fn()


class State:
    pass


def same(a, b):
    if isinstance(a, dyn.Tensor):
        return isinstance(b, dyn.Tensor) and a.dtype == b.dtype and list(a.shape) == list(b.shape) and \
            a.detach().numpy().tobytes() == b.detach().numpy().tobytes()
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def run_program(index, seed, verify, show=False):
    rng = random.Random(seed * 1_000_003 + index)
    src = program_source(rng)
    if show:
        print(src)
    s = State()
    s.G, s.CFG, s.cell = {"n": 1, "f": 0.5, "mode": "a"}, {"w": (1.0, 0.0)}, [1.0]
    ns = {"nn": nn, "dyn": dyn}
    exec(compile(src, f"<python_state {seed}:{index}>", "exec"), ns)
    M = ns["make"](s.G, s.CFG, s.cell)
    dyn.manual_seed(index)
    s.width, s.hooks = 4, []
    s.model = M(s.width, rng.randint(0, 3))
    compiled = dyn.compile(s.model, verify=verify, cache_limit=64)
    grad = rng.random() < 0.8  # most calls under no_grad: results that need no autograd history lift
    problems, log = [], []
    for call in range(rng.randint(4, 12)):
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            name, fn = rng.choice(MUTATIONS)
            fn(s, rng)
            log.append(name)
        x = dyn.randn(rng.choice([1, 2]), 4)
        kwargs = {"n": rng.choice([1, 2])} if rng.random() < 0.3 else {}
        ctx = dyn.no_grad() if grad else dyn.enable_grad()
        with ctx:
            want = s.model(x, **kwargs)
            try:
                got = compiled(x, **kwargs)
            except dyn.LiftMismatch as e:
                problems.append(f"call {call} after {log[-3:]}: {e}")
                break
        if not same(got, want):
            problems.append(f"call {call} after {log[-3:]}: compiled {got!r} where eager gave {want!r}")
            break
    return problems, compiled._state.lifted_hits + compiled._verified, compiled._state.calls, compiled


if __name__ == "__main__":
    _lift_runner.main(run_program, "python_state.py", 200, "its source")
