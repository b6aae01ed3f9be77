"""Random differential checker for dyn.compile: in-place ops on arguments, globals and views of
them, global state changed between calls (and inside the function), autograd (backward inside the
function, .grad, writes to tensors saved for backward) and graph breaks (.item(), if on a tensor,
print, .numpy() reads and writes through .numpy()).

Each random program is generated as source text: a standalone script (run it with dynrepl to see
eager and compiled side by side). The checker runs fn eagerly on fresh inputs, then one
dyn.compile(fn) for the same 3 calls (--calls; the grad mode, the default dtype, the shapes and the
aliasing of the arguments change between calls, some arguments are the same tensors from call to
call, and fn may call another compiled function), and compares bit for bit: the return values (bytes,
dtype, shape, requires_grad, is_leaf, and which arguments they are / share memory with), the
arguments and the global tensor after the call, the .grad of the arguments and of returned leaves,
and whether an exception was raised (same type, loosely the same message: its first 6 words).

    build/repl/dynrepl --batch tests/fuzz/random_inplace.py                 # 300 programs, seed 0
    build/repl/dynrepl --batch tests/fuzz/random_inplace.py --programs 50 --seed 3
    build/repl/dynrepl --batch tests/fuzz/random_inplace.py --one 17        # only program 17, shown
    build/repl/dynrepl --batch tests/fuzz/random_inplace.py --fork          # each program in a child
    build/repl/dynrepl --batch tests/fuzz/random_inplace.py --fork --shrink # + minimal repro per kind
    build/repl/dynrepl --batch tests/fuzz/random_inplace.py --shrink-file prog.py   # reduce a file

In-process (the default) 300 programs take about a second, but a segfault ends the run; --one K
then runs only program K. --fork runs every program in a child `dynrepl --batch` process (the
program in a temp file), so a crash is reported as a failure with the program's source; the
children run a private copy of the binary taken at the start, so a rebuild during the run does
not mix two engines (--no-snapshot turns this off). --shrink (in child processes) reduces the
smallest failing program of each failure kind, dropping statements, calls, return values,
arguments and global-state changes while the failure kind stays the same; --shrink-file does the
same by lines for any program file written by this checker. The binary is $DYNREPL or
build/repl/dynrepl. The last line printed is `N passed, M failed`; the exit status is 1 if M > 0.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import runpy
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

import dyn

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MARK = "@@RANDOM_INPLACE_RESULT@@ "
PHASE = "@@RANDOM_INPLACE_PHASE@@ "  # a child says what it is about to run, for crash reports
PRINT_PHASES = False

# ----------------------------------------------------------------------------------------------
# Vocabulary (every op here exists in dyn: see dir(dyn.Tensor)).
# {p} is the target / first operand, {q} a second tensor of the same shape.

COMPUTE = {
    "any": [
        "{p} + {q}", "{p} * {q}", "{p} - {q} * 0.5", "{p} * 2.0", "({p} - {q}).relu()", "{p}.sigmoid()",
        "{p}.tanh() + {q}", "{p}.exp()", "{p}.abs().sqrt()", "{p}.clone()", "dyn.where({p} > 0, {p}, {q})",
        "{p}.atan() + {q}.tanh().asin()", "{p}.sinh() - {q}.cosh() * 0.5", "{p}.erfc() * {q}.asinh()",
        "({p}.abs() + 1.0).acosh() + ({q} * 0.5).tanh().atanh()", "({p} * 0.5).tan() + {q}.tanh().acos()",
        "{p}.fmod({q}.abs() + 0.5) + dyn.hypot({p}, {q})", "{p}.logaddexp({q})",
        "{p}.div({q}.abs() + 1.0, rounding_mode='trunc')", "{p}.div(0.75, rounding_mode='floor')",
        "{p} + dyn.ones({p}.shape)", "{p} * dyn.full({p}.shape, 0.5)", "{p}.clamp(-0.5, 0.5)",
        "{p}.maximum({q})", "{p} / ({q}.abs() + 1.0)", "{p}.softmax(-1)", "{p}.detach()", "{p}.double()",
        "{p} + {p}.sum()", "{p} * {q}.mean()", "{p}.view({p}.shape)", "{p} + dyn.tensor(0.25)",
        "{p}.pow(2) - {q}", "dyn.from_numpy({p}.numpy())", "{p}.flatten().reshape({p}.shape)",
        "{p} + dyn.rand_like({p})", "{p}.detach().clone().requires_grad_()", "dyn.cat([{p}[:1], {q}[1:]])",
        "dyn.stack([{p}, {q}]).sum(0)", "dyn.where({p} > {q}, {q}, 0.0)", "{p}.float()", "{p}[...]",
        # broadcasting against reductions kept as dims, dtype promotion inside a chain, row kernels
        "{p} - {p}.amax(-1, keepdim=True)", "{p} / ({q}.abs().sum(-1, keepdim=True) + 1.0)",
        "({p} - {p}.mean(-1, keepdim=True)) * {q}.var(-1, keepdim=True)", "{p}.log_softmax(-1) + {q}",
        "{p}.logsumexp(-1, keepdim=True) * {q}", "{p} + {p}.int()", "({p} > 0) * {q} + {p}.long() * 2",
        "{p} * {q}.std(-1, keepdim=True)", "{p}.cumsum(-1) - {q}.flip(-1)", "{p}.masked_fill({q} > 0, 0.5)",
        "{p}.clamp_min(0.1).rsqrt() + {q}.square()", "{p}.lerp({q}, 0.3)", "{p}.addcmul({q}, {p}, value=0.5)",
        # the composites of torch.special, torch.distributions and tensor-bound clamps
        "{p}.lgamma() + ({q}.abs() + 0.25).digamma()", "dyn.special.erfinv({p}.tanh() * 0.9) * {q}",
        "dyn.polygamma(1, {p}.abs() + 0.5) - {q}", "dyn.special.ndtr({p}) + {q}.sign()",
        "{p}.clamp(-{q}.abs(), {q}.abs())", "dyn.distributions.Normal({p}, {q}.abs() + 0.5).log_prob({q} * 0.5)",
        "{p}.remainder(0.7) + {q}.sign()", "dyn.where({p} > 0, {p}, 1)", "{p}.gather(-1, {q}.argsort(-1))",
        "{p}.norm(dim=-1, keepdim=True) + {q}",
        # the other dtypes: float16 and bfloat16 round at every op, integers wrap
        "{p}.half() * {q}.half() + 1.5", "({p}.bfloat16() * {q}).exp()", "{p}.half().softmax(-1).float() + {q}",
        "({p}.bfloat16() - {q}.bfloat16()).abs().sqrt()", "{p}.to(dyn.int32) * 3 + {q}.int()",
        "({p} * 40).to(dyn.int8) * 5", "({p} * 3).to(dyn.uint8).to({p}.dtype)", "{p}.half().sum(-1, keepdim=True)",
        "{p}.bfloat16().cumsum(-1)", "({p}.int() // 2) % 3 + {q}",
        # composites of the namespace (their gradients are PyTorch's, not always the ops')
        "{p}.copysign({q})", "dyn.xlogy({p}, {q}.abs() + 0.5)", "{p}.sinc() * {q}", "{p}.logcumsumexp(-1)",
        "dyn.nansum({p}, -1, keepdim=True) + {q}", "{p}.diff(dim=-1, prepend={q}[..., :1])",
        "{p}.scatter_reduce(-1, {q}.argsort(-1), {q}, 'amax')",
        "{p}.index_fill(-1, dyn.tensor([0]), 0.5) * {q}",
    ],
    1: ["{p} * ({p} @ {q})", "{p}.unsqueeze(0).squeeze(0)", "({p}.unsqueeze(-1) * {q}.unsqueeze(0)).sum(-1)",
        "{p}[dyn.arange({p}.shape[0]).flip(0)]", "{p}.roll(1, 0) * {q}"],
    2: ["({p} @ {q}.t()) @ {p}", "{p}.t().t()", "{p}.softmax(0)", "{p}.reshape(-1).reshape({p}.shape)",
        "{p}.permute(1, 0).t()", "{p}.unsqueeze(1).squeeze(1)", "{p} + {q}[:1]", "{p} * {q}[:, :1]",
        "{p}.index_select(0, dyn.arange({p}.shape[0]).flip(0))", "{p}.tril() + {q}.t().t()",
        "({p}.unsqueeze(0) + {q}.unsqueeze(1)).sum(0)", "{p}.sum(0, keepdim=True) * {q}",
        "{p}.prod(-1, keepdim=True) + {q}", "dyn.cat([{p}, {q}], 1)[:, ::2]",
        "{p}.unfold(1, 1, 1).sum(-1) + {q}", "dyn.kron({p}, dyn.ones(1, 1)) * {q}",
        "{p}.masked_scatter({q} > 0, {p} * 2)"],
}
NO_GRAD_RESULT = ("detach", "numpy", "requires_grad_")  # templates whose result is not a graph of p's leaves

# views of a tensor to write through (the same template on another tensor gives an operand of the
# same shape)
VIEWS = {
    1: ["{}", "{}", "{}[0]", "{}[1:]", "{}[::2]", "{}[-2:]", "{}.unsqueeze(0)", "{}.t()", "{}[...]",
        "{}.detach()[1:]", "{}.view(1, -1)[0]", "{0}.flatten()"],
    2: ["{}", "{}", "{}[0]", "{}[1:]", "{}[:, 1]", "{}.t()", "{}.t()[0]", "{}[-1:, ::2]", "{}.T[1:]",
        "{}.view(-1)", "{}.unsqueeze(0)", "{}[0, 1:]", "{}.detach()[1]", "{}.transpose(0, 1)[:, 0]",
        "{}.reshape(-1)[::2]", "{0}.permute(1, 0)[1]", "{0}.flatten()[1:]", "{0}[:1].expand({0}.shape)",
        "{0}.squeeze()"],
}
# (target view, operand view of the same tensor) that partially overlap
OVERLAP = {1: [("{}[1:]", "{}[:-1]")], 2: [("{}[1:]", "{}[:-1]"), ("{}[:, 1:]", "{}[:, :-1]")]}
INDEX = {
    1: ["[0]", "[1:]", "[::2]", "[-1]", "[...]", "[:2]"],
    2: ["[0]", "[1:]", "[:, 1]", "[...]", "[0, 1]", "[-1]", "[:, ::2]", "[1:, :2]"],
}
METHOD_OPS = [
    "add_({s})", "add_({O})", "add_({O}, alpha=2.0)", "sub_({O})", "sub_({s})", "mul_({s})", "mul_({O})",
    "div_({snz})", "div_({O}.abs() + 1.0)", "fill_({s})", "zero_()", "copy_({O})", "copy_({T}.clamp(-1.0, 1.0))",
    "copy_({O}.clamp(min=0.0))", "mul_({O}.sigmoid())", "add_(dyn.tensor(0.5))", "add_(1)", "mul_(3)",
    "mul_(dyn.rand_like({T}))", "sub_({O}.double())", "atan_()", "sinh_()", "erfc_()", "tanh_().asin_()",
]
AUG_OPS = ["+=", "-=", "*=", "/="]
SCALARS = ["1", "2", "0.5", "-1.25", "3.0", "2.5", "-0.75", "5.0"]
NONZERO = ["2.0", "-4.0", "0.5", "3"]

# global state around one call: (label, lines before, indent of the call, lines after)
STATES = {
    "plain": ([], 0, []),
    "no_grad": (["with dyn.no_grad():"], 1, []),
    "enable_grad": (["with dyn.no_grad():", "    with dyn.enable_grad():"], 2, []),
    "grad_off": (["dyn.set_grad_enabled(False)", "try:"], 1, ["finally:", "    dyn.set_grad_enabled(True)"]),
    "float64": (["dyn.set_default_dtype(dyn.float64)", "try:"], 1,
                ["finally:", "    dyn.set_default_dtype(dyn.float32)"]),
    "float64_no_grad": (["dyn.set_default_dtype(dyn.float64)", "try:", "    with dyn.no_grad():"], 2,
                        ["finally:", "    dyn.set_default_dtype(dyn.float32)"]),
}
CALLS = 3  # calls of each program (--calls)

# a compiled function that fn calls (inlined into fn's region when fn is compiled; its own region
# when fn runs eagerly)
HELPERS = [
    ["def helper(x, y):", "    x.mul_(2.0)", "    return x + y"],
    ["def helper(x, y):", "    z = x * y", "    if z.sum() > 0:", "        x.add_(1)", "    return z"],
    ["def helper(x, y):", "    x[0] = y[0]", "    print(x.sum().item() > 0, file=io.StringIO())",
     "    return y.t().t() * 1.0"],
    ["def helper(x, y):", "    with dyn.no_grad():", "        x.sub_(y)", "    return (x * y).sum() * y"],
]
STATE_WEIGHTS = {"plain": 3, "no_grad": 3, "enable_grad": 1, "grad_off": 1, "float64": 2, "float64_no_grad": 1}
SHAPES = {1: [(4,), (3,), (5,), (2,)], 2: [(2, 3), (3, 3), (3, 2), (2, 2), (4, 3)]}

ARG_CODE = {
    "f32": "dyn.tensor(r.standard_normal(shape).astype(np.float32))",
    # not contiguous: the transpose of a (shape reversed) tensor, or every other element
    "noncontig": "dyn.tensor(r.standard_normal(shape[::-1]).astype(np.float32)).t()",
    "noncontig1": "dyn.tensor(r.standard_normal((2 * shape[0],)).astype(np.float32))[::2]",
    # a view at a storage offset
    "offset": "dyn.tensor(r.standard_normal((shape[0] + 1,) + shape[1:]).astype(np.float32))[1:]",
    "i64": "dyn.tensor(r.integers(-4, 5, shape))",
    "i32": "dyn.tensor(r.integers(-4, 5, shape), dtype=dyn.int32)",
    "u8": "dyn.tensor(r.integers(0, 9, shape), dtype=dyn.uint8)",
    "f16": "dyn.tensor(r.standard_normal(shape).astype(np.float16))",
    "bf16": "dyn.tensor(r.standard_normal(shape).astype(np.float32)).bfloat16()",
    "list": "dyn.tensor(r.standard_normal(shape).tolist())",  # the default dtype
    "grad": "dyn.tensor(r.standard_normal(shape).astype(np.float32), requires_grad=True)",
    "grad_list": "dyn.tensor(r.standard_normal(shape).tolist(), requires_grad=True)",
}


INT_KINDS = ("i64", "i32", "u8")


class Var:
    def __init__(self, name, leaves=()):
        self.name = name
        self.leaves = frozenset(leaves)  # names of the requires_grad arguments it may depend on

    @property
    def rg(self):
        return bool(self.leaves)


class Stmt:
    """Some lines of fn's body; alts are simpler replacements (lists of Stmt) for the shrinker."""

    def __init__(self, lines, alts=()):
        self.lines = list(lines)
        self.alts = list(alts)


class Program:
    def __init__(self, index, seed, rank, args, calls, body, ret, uses_buf, alias=None, glob=None, carry=(),
                 helper=None):
        self.index, self.seed, self.rank = index, seed, rank
        self.args = args  # [(name, kind)]
        self.calls = calls  # [(state, shape)]
        self.body = body  # [Stmt]
        self.ret = ret  # [expression]
        self.uses_buf = uses_buf
        self.alias = alias  # None or (call index, "b = a" / "b = a.detach()" ...): b aliases a in that call
        self.glob = glob  # None or the kind of a module-level tensor G that fn may use
        self.carry = tuple(carry)  # arguments passed on to the next call (same tensor) when the shape stays
        self.helper = helper  # None or an index into HELPERS

    def copy(self, **kw):
        d = dict(index=self.index, seed=self.seed, rank=self.rank, args=list(self.args), calls=list(self.calls),
                 body=list(self.body), ret=list(self.ret), uses_buf=self.uses_buf, alias=self.alias, glob=self.glob,
                 carry=self.carry, helper=self.helper)
        d.update(kw)
        return Program(**d)

    def call_label(self, k):
        state, shape = self.calls[k]
        return f"{state} {shape}"

    def size(self):
        return sum(len(s.lines) for s in self.body) + len(self.ret) + len(self.calls) + len(self.args)

    def fn_lines(self):
        names = ", ".join(n for n, _ in self.args)
        out = [f"def fn({names}):"]
        if self.glob and self.uses_glob():
            out.append("    global G")
        uses_buf = self.uses_buf and any("buf" in line for s in self.body for line in s.lines)
        if uses_buf:
            out.append("    buf = io.StringIO()")
        for s in self.body:
            out += ["    " + line for line in s.lines]
        ret = list(self.ret) + (["buf.getvalue()"] if uses_buf else [])
        if not ret:
            out.append("    return None")
        elif len(ret) == 1:
            out.append(f"    return {ret[0]}")
        else:
            out.append(f"    return {', '.join(ret)}")
        return out

    def body_text(self):
        return "\n".join(line for s in self.body for line in s.lines) + "\n" + " ".join(self.ret)

    def uses_glob(self):
        return bool(re.search(r"\bG\b", self.body_text()))

    def sections(self):
        head = [f"# random_inplace program {self.index} (seed {self.seed})",
                f"# rerun: build/repl/dynrepl --batch tests/fuzz/random_inplace.py --seed {self.seed} --one {self.index}",
                "import io", "", "import numpy as np", "", "import dyn"]
        glob = self.glob and self.uses_glob()
        inputs = ["def inputs(k, shape):"]
        if glob:
            inputs.append("    global G")
        inputs += [f"    r = np.random.default_rng([{self.seed}, {self.index}, k])", "    dyn.manual_seed(k)"]
        for name, kind in self.args:
            inputs.append(f"    {name} = {ARG_CODE[kind]}")
        if glob:
            inputs.append(f"    G = {ARG_CODE[self.glob]}")
        names = [n for n, _ in self.args]
        carry = [n for n in self.carry if n in names]
        if carry:
            inputs.append("    if KEPT.get(\"shape\") == shape:  # the same tensors as in the last call")
            inputs.append(f"        {', '.join(carry)} = {', '.join(f'KEPT[{n!r}]' for n in carry)}")
            inputs.append(f"    KEPT.update(shape=shape, {', '.join(f'{n}={n}' for n in carry)})")
        if self.alias and self.alias[0] < len(self.calls) and "a" in names and "b" in names:
            inputs.append(f"    if k == {self.alias[0]}:")
            inputs.append(f"        {self.alias[1]}  # b aliases a in this call")
        inputs.append(f"    return [{', '.join(names)}]")
        if glob:
            inputs += ["", "", "def outside():", "    \"\"\"Tensors from outside fn that it may change.\"\"\"",
                       "    return [G]"]
        run = ["def run(f, call):", "    \"\"\"The calls, each under its global state.\"\"\""]
        if self.helper is not None and "chelper(" in self.body_text():
            head.append("\n\n" + "\n".join(HELPERS[self.helper]) + "\n\n\nchelper = dyn.compile(helper)")
        if carry:
            head.append("\nKEPT = {}")
            run.append("    KEPT.clear()")
        for k, (state, shape) in enumerate(self.calls):
            before, indent, after = STATES[state]
            run += ["    " + b for b in before]
            run.append("    " + "    " * indent + f"call(f, inputs({k}, {shape!r}))")
            run += ["    " + a for a in after]
        main = ["if __name__ == \"__main__\":",
                "    def show(f, args):",
                "        try:",
                "            print(\"  returned\", f(*args))",
                "        except Exception as e:",
                "            print(\"  raised\", type(e).__name__, e)",
                "        print(\"  inputs after\", args, \"grads\", [t.grad for t in args])",
                ] + (["        print(\"  outside after\", outside())"] if glob else []) + [
                "",
                "    for label, f in ((\"eager\", fn), (\"compiled\", dyn.compile(fn))):",
                "        print(label)",
                "        run(f, show)"]
        return ["\n".join(x) for x in (head, self.fn_lines(), inputs, run, main)]

    def source(self, main=True):
        parts = self.sections()
        return "\n\n\n".join(parts if main else parts[:-1]) + "\n"


class Gen:
    def __init__(self, seed, index):
        self.seed, self.index = seed, index
        self.r = random.Random(seed * 1000003 + index)
        self.n = 0
        self.pool = []  # Var: tensors of the arguments' shape
        self.scalars = []  # names of Python floats from .item()
        self.extras = []  # returnable non-tensor values (floats, lists, numpy copies)
        self.uses_buf = False

    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def pick(self, want_rg=None, p_rg=0.25):
        r = self.r
        if want_rg is True:
            cands = [v for v in self.pool if v.rg]
            if cands:
                return r.choice(cands)
        weights = [(p_rg if v.rg else 1.0) for v in self.pool]
        return r.choices(self.pool, weights)[0]

    def scalar(self, nonzero=False):
        if self.scalars and self.r.random() < 0.25:
            return self.r.choice(self.scalars)
        return self.r.choice(NONZERO if nonzero else SCALARS)

    # -- statements
    def compute(self, no_grad=False):
        r = self.r
        tpl = r.choice(COMPUTE["any"] * 1 + COMPUTE[self.rank] * 2)
        p = self.pick(p_rg=0.7)
        q = self.pick(p_rg=0.7)
        name = self.fresh("t")
        leaves = set()
        if "requires_grad_" in tpl and not no_grad:
            leaves = {name}
        elif not no_grad and not any(w in tpl for w in NO_GRAD_RESULT):
            leaves |= p.leaves
            if "{q}" in tpl:
                leaves |= q.leaves
        self.pool.append(Var(name, leaves))
        return f"{name} = " + tpl.format(p=p.name, q=q.name)

    def inplace_line(self, prefer_rg=False):
        r = self.r
        p = self.pick(want_rg=True if prefer_rg else None, p_rg=0.3)
        q = self.pick(p_rg=0.3 if p.rg else 0.1)
        kind = r.random()
        if kind < 0.55:
            if r.random() < 0.1:
                vt, vo = r.choice(OVERLAP[self.rank])
                q = p
            else:
                vt = vo = r.choice(VIEWS[self.rank])
            T, O = vt.format(p.name), vo.format(q.name)
            op = r.choice(METHOD_OPS)
            return f"{T}." + op.format(O=O, T=T, s=self.scalar(), snz=self.scalar(nonzero=True))
        if kind < 0.75:
            vt = r.choice([v for v in VIEWS[self.rank] if v == "{}" or v.endswith("]")])
            T, O = vt.format(p.name), vt.format(q.name)
            aug = r.choice(AUG_OPS)
            operand = r.choice([self.scalar(nonzero=True), O, f"{O} * 0.5"])
            if aug == "/=" and operand == O:
                operand = f"({O}.abs() + 1.0)"
            return f"{T} {aug} {operand}"
        if self.rank == 2 and r.random() < 0.2:
            return f"{p.name}.t(){r.choice(INDEX[2])} = {self.scalar()}"
        if r.random() < 0.25:
            # (dyn's x[mask] = tensor is not supported, so x[mask] *= 0.5 is left out)
            idx = r.choice([f"[{q.name} > 0]", f"[{p.name} < 0]", "[dyn.tensor([0, -1])]"])
            if "dyn.tensor" in idx and r.random() < 0.5:
                return f"{p.name}{idx} *= 0.5"
            return f"{p.name}{idx} = {self.scalar()}"
        idx = r.choice(INDEX[self.rank])
        val = r.choice([self.scalar(), f"{q.name}{idx}", f"{q.name}{idx} * 2.0", "dyn.tensor(1.5)"])
        return f"{p.name}{idx} = {val}"

    def inplace(self):
        return Stmt([self.inplace_line()])

    def helper_call(self):
        p, q = self.pick(p_rg=0.1), self.pick(p_rg=0.4)
        name = self.fresh("t")
        self.pool.append(Var(name, p.leaves | q.leaves))
        return Stmt([f"{name} = chelper({p.name}, {q.name})"])

    def no_grad_block(self):
        inner = [Stmt([self.inplace_line(prefer_rg=True)])]
        if self.r.random() < 0.3:
            inner.append(Stmt([self.compute(no_grad=True)]))
        if self.r.random() < 0.25:
            inner.append(self.graph_break())
        return Stmt(["with dyn.no_grad():"] + ["    " + x for st in inner for x in st.lines], alts=[inner])

    def backward(self):
        r = self.r
        rgs = [v for v in self.pool if v.rg]
        if not rgs:
            return [self.inplace()]
        v = r.choice(rgs)
        q = self.pick(p_rg=0.2)
        form = r.choice(["{v}.sum().backward()", "({v} * {q}).sum().backward()", "{v}.pow(2).mean().backward()",
                         "{v}.sum().backward(retain_graph=True)"])
        stmts = [Stmt([form.format(v=v.name, q=q.name)])]
        if r.random() < 0.6:
            leaf = r.choice(sorted(v.leaves))
            g = self.fresh("g")
            stmts.append(Stmt([f"{g} = {leaf}.grad"]))
            self.pool.append(Var(g))
        elif r.random() < 0.3:
            leaf = r.choice(sorted(v.leaves))
            stmts.append(Stmt([r.choice([f"{leaf}.grad = None", f"{leaf}.grad.zero_()", f"{leaf}.grad.mul_(0.5)",
                                         f"{leaf}.grad[0] = 1.0"])]))
        return stmts

    def state_block(self):
        """A change of global state inside fn."""
        r = self.r
        k = r.randrange(3)
        if k == 0:  # default dtype, restored; maybe a graph break while it is float64
            inner = [Stmt([self.compute()])]
            if r.random() < 0.4:
                inner.insert(r.randint(0, 1), self.graph_break())
            lines = (["prev = dyn.get_default_dtype()", "dyn.set_default_dtype(dyn.float64)", "try:"] +
                     ["    " + x for st in inner for x in st.lines] + ["finally:", "    dyn.set_default_dtype(prev)"])
            return [Stmt(lines, alts=[inner])]
        if k == 1:  # grad on again (matters in calls under no_grad)
            inner = [self.compute()]
            rgs = [v for v in self.pool if v.rg]
            if rgs and r.random() < 0.6:
                inner.append(f"{rgs[-1].name}.sum().backward()")
            return [Stmt(["with dyn.enable_grad():"] + ["    " + x for x in inner], alts=[[Stmt(inner)]])]
        inner = self.inplace_line(prefer_rg=True)
        return [Stmt(["with dyn.set_grad_enabled(False):", "    " + inner], alts=[[Stmt([inner])]])]

    def graph_break(self):
        r = self.r
        p = self.pick(p_rg=0.2)
        k = r.randrange(7)
        if k == 0:
            s = self.fresh("s")
            self.scalars.append(s)
            self.extras.append(s)
            return Stmt([f"{s} = {p.name}.sum().item()"])
        if k == 1:
            a, b = self.inplace_line(), self.inplace_line()
            cond = r.choice([f"{p.name}.sum() > 0", f"{p.name}.max().item() > 0.5", f"({p.name} > 0).any()"])
            return Stmt([f"if {cond}:", "    " + a, "else:", "    " + b], alts=[[Stmt([a])], [Stmt([b])]])
        if k == 2:
            self.uses_buf = True
            return Stmt([f"print({p.name}, file=buf)"])
        if k == 3:
            n = self.fresh("n")
            self.extras.append(n)
            return Stmt([f"{n} = {p.name}.numpy().copy()"])
        if k == 4:
            return Stmt([r.choice([f"{p.name}.numpy()[...] *= 2.0", f"{p.name}.numpy()[0] = {self.scalar()}",
                                   f"{p.name}.numpy()[-1] += 1.0"])])
        if k == 5:
            l = self.fresh("l")
            self.extras.append(l)
            return Stmt([f"{l} = {p.name}.tolist()"])
        f = self.fresh("f")
        self.extras.append(f)
        return Stmt([f"{f} = float({p.name}.sum())"])

    # t = q * w (saves q), later an in-place write to q or a view of q, and t....backward() at the end
    def saved_first(self):
        r = self.r
        leaves = [v for v in self.pool if v.rg]
        plain = [v for v in self.pool if not v.rg]
        if not leaves or not plain:
            return None
        computed = [v for v in plain if v.name.startswith("t")]
        w, q = r.choice(leaves), r.choice(computed if computed and r.random() < 0.6 else plain)
        t = self.fresh("t")
        form = r.choice(["{q} * {w}", "{w} * {q}.t().t()" if self.rank == 2 else "{w} * {q}[...]",
                         "({q} * {w}).sin()", "{w}.exp() * {q}"])
        self.saved = (t, q, w)
        self.pool.append(Var(t, w.leaves))
        return Stmt([f"{t} = " + form.format(q=q.name, w=w.name)])

    def saved_mid(self):
        r = self.r
        t, q, w = self.saved
        vt = r.choice(VIEWS[self.rank])
        other = self.pick(p_rg=0.0)
        op = r.choice(["add_(1)", "mul_(2.0)", "zero_()", "fill_(0.5)", "sub_({O})", "copy_({O})"])
        return Stmt([r.choice([f"{vt.format(q.name)}." + op.format(O=vt.format(other.name)),
                               f"{q.name}{r.choice(INDEX[self.rank])} = 5.0",
                               f"{q.name}.numpy()[0] = 5.0"])])

    def saved_last(self):
        r = self.r
        t, q, w = self.saved
        out = [Stmt([f"{t}.sum().backward()"])]
        if r.random() < 0.5:
            g = self.fresh("g")
            out.append(Stmt([f"{g} = {w.name}.grad"]))
            self.pool.append(Var(g))
        return out


def generate(seed, index):
    g = Gen(seed, index)
    r = g.r
    rank = g.rank = r.choice([1, 2, 2])
    noncontig = "noncontig" if rank == 2 else "noncontig1"
    args = [("a", r.choice(["f32", "f32", "f32", "list", noncontig, "offset"])),
            ("b", r.choice(["f32", "f32", "list", noncontig, "offset", "i64", "i32", "f16", "bf16", "u8"]))]
    if r.random() < 0.3:
        args.append(("c", r.choice(["f32", "f32", "i64", "i32", "f16", "bf16"])))
    if r.random() < 0.65:
        args.append(("w", r.choice(["grad", "grad", "grad_list"])))
        if r.random() < 0.2:
            args.append(("v", "grad"))
    for name, kind in args:
        g.pool.append(Var(name, [name] if kind.startswith("grad") else []))
    glob = r.choice(["f32", "f32", noncontig]) if r.random() < 0.25 else None
    if glob:
        g.pool.append(Var("G"))
    helper = r.randrange(len(HELPERS)) if r.random() < 0.3 else None
    carry = ()
    if r.random() < 0.25:
        carry = tuple(n for n, kind in args if r.random() < 0.6 and kind not in INT_KINDS) or (args[0][0],)
    alias = None
    if r.random() < 0.2:
        alias = (r.choice([0, 1, 1, 2, 2]), r.choice(["b = a", "b = a.detach()", "b = a[...]"]))

    body = []
    n = r.randint(2, 7)
    saved = r.random() < 0.45
    first_at = r.randint(0, n - 1)
    mid_at = r.randint(first_at + 1, n)
    g.saved = None
    for step in range(n + 1):
        if saved and step == first_at:
            first = g.saved_first()
            if first:
                body.append(first)
        if g.saved and step == mid_at:
            body.append(g.saved_mid())
        if step == n:
            break
        x = r.random()
        if x < 0.25:
            body.append(Stmt([g.compute()]))
        elif x < 0.58:
            body.append(g.inplace())
        elif x < 0.66 and any(v.rg for v in g.pool):
            body.append(g.no_grad_block())
        elif x < 0.78 and any(v.rg for v in g.pool):
            body += g.backward()
        elif x < 0.84:
            body += g.state_block()
        elif x < 0.93 and helper is not None:
            body.append(g.helper_call())
        else:
            body.append(g.graph_break())
    if g.saved:
        body += g.saved_last()

    tensors = [v.name for v in g.pool]
    ret = r.sample(tensors[-4:], min(len(tensors[-4:]), r.randint(1, 2)))
    if r.random() < 0.3:
        ret.append(r.choice(tensors))
    ret += r.sample(g.extras, min(len(g.extras), 2))
    ret = list(dict.fromkeys(ret))

    base = r.choice(SHAPES[rank])
    calls = []
    weights = dict(STATE_WEIGHTS)
    if any("backward()" in line for st in body for line in st.lines):  # fails at once without grad mode
        weights.update(no_grad=1, float64_no_grad=0.5, grad_off=0.5)
    for k in range(CALLS):
        state = "plain" if (k == 0 and r.random() < 0.6) else r.choices(list(weights), list(weights.values()))[0]
        shape = base if (k == 0 or r.random() < 0.65) else r.choice(SHAPES[rank])
        calls.append((state, shape))
    return Program(index, seed, rank, args, calls, body, ret, g.uses_buf, alias, glob, carry, helper)


# ----------------------------------------------------------------------------------------------
# Running and comparing


def snap(x):
    """[key, display]: key is what is compared (JSON-able), display what a diff shows."""
    if isinstance(x, dyn.Tensor):
        try:
            a = np.ascontiguousarray(x.detach().numpy())
            key = ["tensor", str(x.dtype), list(x.shape), bool(x.requires_grad), bool(x.is_leaf),
                   a.reshape(-1).view(np.uint8).tobytes().hex()]
            extra = (" requires_grad" if x.requires_grad else "") + ("" if x.is_leaf else " (non-leaf)")
            return [key, f"{x.dtype} {list(x.shape)} {a.tolist()}{extra}"]
        except Exception as e:  # noqa: BLE001 - the snapshot of a broken tensor is itself a finding
            return [["unreadable tensor", type(e).__name__], f"<unreadable tensor: {type(e).__name__}: {e}>"]
    if isinstance(x, np.ndarray):
        a = np.ascontiguousarray(x)
        return [["ndarray", str(a.dtype), list(a.shape), a.reshape(-1).view(np.uint8).tobytes().hex()],
                f"ndarray {a.dtype} {a.tolist()}"]
    if isinstance(x, float):
        return [["float", struct.pack("<d", x).hex()], repr(x)]
    if isinstance(x, (tuple, list)):
        kids = [snap(y) for y in x]
        return [[type(x).__name__, len(x)] + [k for k, _ in kids],
                ("(" if isinstance(x, tuple) else "[") + ", ".join(d for _, d in kids) + (")" if isinstance(x, tuple) else "]")]
    if x is None or isinstance(x, (bool, int, str)):
        return [[type(x).__name__, x], repr(x)]
    return [["other", type(x).__name__, repr(x)], repr(x)]


TENSOR_FIELDS = ["kind", "dtype", "shape", "requires_grad", "is_leaf", "bytes"]


def first_difference(a, b):
    """None if equal, else a word saying what differs first."""
    if a == b:
        return None
    if a[0] != b[0]:
        return "type"
    if a[0] == "tensor":
        for name, x, y in zip(TENSOR_FIELDS, a, b):
            if x != y:
                return name
    if a[0] in ("tuple", "list"):
        if a[1] != b[1]:
            return "length"
        for x, y in zip(a[2:], b[2:]):
            d = first_difference(x, y)
            if d:
                return d
    if a[0] == "ndarray":
        return "ndarray bytes" if a[:3] == b[:3] else "ndarray dtype/shape"
    return "value"


def tensors_in(x):
    if isinstance(x, dyn.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for y in x for t in tensors_in(y)]
    return []


def aliasing(outs, args):
    """For each output tensor: which arguments it is, and which it shares memory with."""
    res = []
    for o in outs:
        same = [i for i, a in enumerate(args) if o is a]
        try:
            shares = [i for i, a in enumerate(args) if isinstance(a, dyn.Tensor)
                      and np.shares_memory(o.detach().numpy(), a.detach().numpy())]
        except Exception as e:  # noqa: BLE001
            shares = [f"{type(e).__name__}"]
        res.append([same, shares])
    return [res, " ".join(f"out{j}: is {s} shares {m}" for j, (s, m) in enumerate(res))]


def collect(ns, f, mode):
    records = []
    outside = ns.get("outside", lambda: [])

    def call(f, args):
        if PRINT_PHASES:
            print(f"{PHASE}{mode} call {len(records)}", flush=True)
        rec = {"exc": None, "out": None}
        try:
            out = f(*args)
            rec["out"] = snap(out)
            outs = tensors_in(out)
            rec["alias"] = aliasing(outs, args)
            rec["out_grads"] = [snap(o.grad) for o in outs if o.is_leaf and o.requires_grad]
        except Exception as e:  # noqa: BLE001
            rec["exc"] = [type(e).__name__, str(e)]
        rec["args"] = [snap(a) for a in args]
        rec["grads"] = [snap(a.grad if isinstance(a, dyn.Tensor) else None) for a in args]
        rec["outside"] = [snap(t) for t in outside()]
        records.append(rec)

    ns["run"](f, call)
    return records


def loose(msg):
    words = re.sub(r"\d+", "#", msg.lower()).split()
    return " ".join(words[:6])


def short(s, n=240):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 3] + "..."


def compare(eager, comp):
    """[{call, kind, what, eager, compiled}] in call order."""
    diffs = []

    def add(k, kind, what, e, c):
        diffs.append({"call": k, "kind": kind, "what": what, "eager": short(e), "compiled": short(c)})

    if len(eager) != len(comp):
        add(len(comp), "number of calls differs", "calls", len(eager), len(comp))
    for k, (e, c) in enumerate(zip(eager, comp)):
        ee, ce = e["exc"], c["exc"]
        edisp = f"raised {ee[0]}: {ee[1]}" if ee else f"returned {e['out'][1]}"
        cdisp = f"raised {ce[0]}: {ce[1]}" if ce else f"returned {c['out'][1]}"
        if ee and not ce:
            add(k, f"eager raised {ee[0]} ({loose(ee[1])} ...), compiled did not", "result", edisp, cdisp)
        elif ce and not ee:
            add(k, f"compiled raised {ce[0]} ({loose(ce[1])} ...), eager did not", "result", edisp, cdisp)
        elif ee and ce and ee[0] != ce[0]:
            add(k, f"exception type differs: eager {ee[0]} ({loose(ee[1])} ...), compiled {ce[0]}", "result",
                edisp, cdisp)
        elif ee and ce and loose(ee[1]) != loose(ce[1]):
            add(k, f"exception message differs: eager {ee[0]} ({loose(ee[1])} ...), compiled "
                   f"({loose(ce[1])} ...)", "result", edisp, cdisp)
        elif not ee:
            d = first_difference(e["out"][0], c["out"][0])
            if d:
                add(k, f"return value: {d} differs", "returned", e["out"][1], c["out"][1])
            elif e["alias"][0] != c["alias"][0]:
                add(k, "aliasing of outputs with inputs differs", "outputs", e["alias"][1], c["alias"][1])
            for i, (x, y) in enumerate(zip(e["out_grads"], c["out_grads"])):
                d = first_difference(x[0], y[0])
                if d:
                    add(k, f".grad of a returned leaf: {d} differs", f"output leaf {i}.grad", x[1], y[1])
        after = " after an exception" if ee else ""
        for i, (x, y) in enumerate(zip(e["args"], c["args"])):
            d = first_difference(x[0], y[0])
            if d:
                add(k, f"input after the call{after}: {d} differs", f"input {i} after the call", x[1], y[1])
        for i, (x, y) in enumerate(zip(e["grads"], c["grads"])):
            d = first_difference(x[0], y[0])
            if d:
                add(k, f".grad of input{after}: {d} differs", f"input {i}.grad", x[1], y[1])
        for i, (x, y) in enumerate(zip(e["outside"], c["outside"])):
            d = first_difference(x[0], y[0])
            if d:
                add(k, f"global tensor after the call{after}: {d} differs", "global G", x[1], y[1])
    return diffs


def check_file(path, backend="default"):
    """Runs one program file eagerly and compiled; returns {"diffs": [...]} or {"error": ...}."""
    try:
        ns = runpy.run_path(path, run_name="random_inplace_program")
        eager = collect(ns, ns["fn"], "eager")
        comp = collect(ns, dyn.compile(ns["fn"], backend=backend), "compiled")
        diffs = compare(eager, comp)
        leaks = []
        if not dyn.is_grad_enabled():
            leaks.append("grad mode left disabled")
            dyn.set_grad_enabled(True)
        if dyn.get_default_dtype() != dyn.float32:
            leaks.append(f"default dtype left at {dyn.get_default_dtype()}")
            dyn.set_default_dtype(dyn.float32)
        for x in leaks:
            diffs.append({"call": -1, "kind": "global state leaked", "what": x, "eager": "", "compiled": x})
        try:
            dyn.debug.reset()
        except Exception as e:  # noqa: BLE001
            diffs.append({"call": -1, "kind": "dyn.debug.reset() refused after the program", "what": "reset",
                          "eager": "", "compiled": short(f"{type(e).__name__}: {e}")})
        outcomes = [f"{e['exc'][0]}: {loose(e['exc'][1])}" if e["exc"] else "returned" for e in eager]
        return {"diffs": diffs, "eager": outcomes}
    except BaseException as e:  # noqa: BLE001 - a harness-level failure is reported, not raised
        import traceback
        return {"diffs": [{"call": -1, "kind": f"harness error: {type(e).__name__}", "what": "harness",
                           "eager": "", "compiled": short(traceback.format_exc(), 800)}]}


BINARY = None  # set by --fork/--shrink to a private copy


def binary():
    if BINARY:
        return BINARY
    b = os.environ.get("DYNREPL") or os.path.join(ROOT, "build", "repl", "dynrepl")
    return os.path.abspath(b)


def run_child(path, backend, timeout):
    """check_file in a child dynrepl; a crash or a timeout is a result too."""
    cmd = [binary(), "--batch", HERE, "--child", path, "--backend", backend]
    deadline = time.time() + 120
    while True:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return {"diffs": [{"call": -1, "kind": "timeout", "what": "child", "eager": "",
                               "compiled": f"no result after {timeout}s"}]}
        except OSError:  # the binary is being replaced by a build: wait for it
            if time.time() > deadline:
                raise
            time.sleep(1.0)
            continue
        if p.returncode in (126, 127) and time.time() < deadline:
            time.sleep(1.0)
            continue
        break
    for line in p.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    phases = [line[len(PHASE):] for line in p.stdout.splitlines() if line.startswith(PHASE)]
    phase = phases[-1] if phases else "loading the program"
    if p.returncode < 0:
        try:
            name = signal.Signals(-p.returncode).name
        except ValueError:
            name = f"signal {-p.returncode}"
        what = f"crash: {name} in {phase.split(' call')[0]}"
    else:
        what = f"child exited with status {p.returncode} and no result"
    tail = (p.stderr.strip().splitlines() or [""])[-3:]
    return {"diffs": [{"call": -1, "kind": what, "what": f"process (during {phase})", "eager": "",
                       "compiled": short(" | ".join(tail), 400) or "(no output on stderr)"}]}


def write_program(prog, tmpdir):
    path = os.path.join(tmpdir, f"prog_{prog.seed}_{prog.index}.py")
    with open(path, "w") as fh:
        fh.write(prog.source())
    return path


def kind_of(result):
    return result["diffs"][0]["kind"] if result["diffs"] else None


def format_diffs(prog, result, limit=6):
    out = []
    for d in result["diffs"][:limit]:
        if d["call"] < 0:
            where = "program"
        elif prog is not None and d["call"] < len(prog.calls):
            where = f"call {d['call']} [{prog.call_label(d['call'])}]"
        else:
            where = f"call {d['call']}"
        out.append(f"  {where} {d['what']}: {d['kind']}")
        if d["eager"]:
            out.append(f"      eager:    {d['eager']}")
        out.append(f"      {'compiled:' if d['call'] >= 0 else 'detail:  '} {d['compiled']}")
    if len(result["diffs"]) > limit:
        out.append(f"  ... {len(result['diffs']) - limit} more differences")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# Shrinking


def candidates(prog):
    """Smaller variants of prog, most promising first."""
    for k in range(len(prog.calls) - 1, -1, -1):
        if len(prog.calls) > 1:
            yield prog.copy(calls=prog.calls[:k] + prog.calls[k + 1:])
    for i in range(len(prog.body) - 1, -1, -1):
        yield prog.copy(body=prog.body[:i] + prog.body[i + 1:])
        for alt in prog.body[i].alts:
            yield prog.copy(body=prog.body[:i] + alt + prog.body[i + 1:])
    for i in range(len(prog.ret)):
        yield prog.copy(ret=prog.ret[:i] + prog.ret[i + 1:])
    if prog.alias:
        yield prog.copy(alias=None)
    if prog.carry:
        yield prog.copy(carry=())
    text = prog.body_text()
    for i, (name, kind) in enumerate(prog.args):
        if not re.search(rf"\b{name}\b", text):
            yield prog.copy(args=prog.args[:i] + prog.args[i + 1:])
        elif kind == "list":
            yield prog.copy(args=prog.args[:i] + [(name, "f32")] + prog.args[i + 1:])
        elif kind == "grad_list":
            yield prog.copy(args=prog.args[:i] + [(name, "grad")] + prog.args[i + 1:])
    for k, (state, shape) in enumerate(prog.calls):
        if state != "plain":
            simpler = {"float64_no_grad": ["no_grad", "float64"], "enable_grad": ["plain"]}.get(state, ["plain"])
            for s in simpler:
                yield prog.copy(calls=prog.calls[:k] + [(s, shape)] + prog.calls[k + 1:])
        if k and shape != prog.calls[0][1]:
            yield prog.copy(calls=prog.calls[:k] + [(state, prog.calls[0][1])] + prog.calls[k + 1:])


def shrink(prog, kind, backend, timeout, tmpdir, budget=250):
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for cand in candidates(prog):
            tries += 1
            res = run_child(write_program(cand, tmpdir), backend, timeout)
            if kind_of(res) == kind:
                prog, improved = cand, True
                break
            if tries >= budget:
                break
    return prog, run_child(write_program(prog, tmpdir), backend, timeout)


def text_candidates(src):
    """Smaller variants of a program file, by lines: statements (with their blocks) of fn's body
    removed, a block replaced by its body, a call in run() replaced by pass."""
    lines = src.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("def fn("))
    end = next(i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" "))
    units = []  # (first, last+1) of the statements at the body's own indentation
    i = start + 1
    while i < end:
        if lines[i].startswith("    ") and not lines[i].startswith("     ") and not lines[i].startswith("    return"):
            j = i + 1
            while j < end and (lines[j].startswith("     ") or lines[j].startswith("    else") or
                               lines[j].startswith("    finally") or lines[j].startswith("    except")):
                j += 1
            units.append((i, j))
            i = j
        else:
            i += 1
    for a, b in reversed(units):
        yield "\n".join(lines[:a] + lines[b:])
        if b - a > 1 and lines[a].rstrip().endswith(":"):  # keep the first block's body, dedented
            body = []
            for l in lines[a + 1:b]:
                if not l.startswith("        "):
                    break
                body.append(l[4:])
            yield "\n".join(lines[:a] + body + lines[b:])
    for i, l in enumerate(lines):
        if l.strip().startswith("call(f, inputs("):
            yield "\n".join(lines[:i] + [l[: len(l) - len(l.lstrip())] + "pass"] + lines[i + 1:])


def shrink_text(src, kind, backend, timeout, tmpdir, budget=300):
    path = os.path.join(tmpdir, "shrink_file.py")
    tries, improved = 0, True
    while improved and tries < budget:
        improved = False
        for cand in text_candidates(src):
            tries += 1
            with open(path, "w") as fh:
                fh.write(cand)
            if kind_of(run_child(path, backend, timeout)) == kind:
                src, improved = cand, True
                break
            if tries >= budget:
                break
    with open(path, "w") as fh:
        fh.write(src)
    return src, run_child(path, backend, timeout)


def snapshot_binary(tmpdir):
    """A private copy of the binary so that a rebuild during the run does not mix two engines."""
    src = binary()
    for _ in range(120):
        try:
            st = os.stat(src)
            dst = os.path.join(tmpdir, "dynrepl")
            shutil.copy2(src, dst)
            return dst, st
        except OSError:
            time.sleep(1.0)
    raise SystemExit(f"random_inplace: {src} is missing")


# ----------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--one", type=int, default=None, help="run only program K (and show its source)")
    ap.add_argument("--fork", action="store_true", help="run each program in a child dynrepl process")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel children with --fork")
    ap.add_argument("--shrink", action="store_true", help="reduce the shortest failure of each kind")
    ap.add_argument("--backend", default="default", choices=["default", "eager"])
    ap.add_argument("--calls", type=int, default=3, help="calls of each program (eager and compiled)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per child")
    ap.add_argument("--show", action="store_true", help="print every program's source")
    ap.add_argument("--shrink-file", metavar="FILE", help="reduce a failing program file (any source) by lines")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder with the program files")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="children run the binary in place instead of a private copy made at the start")
    ap.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    opts = ap.parse_args()

    if opts.child:
        global PRINT_PHASES
        PRINT_PHASES = True
        print(MARK + json.dumps(check_file(opts.child, opts.backend)), flush=True)
        return 0

    global BINARY
    tmpdir = tempfile.mkdtemp(prefix="random_inplace_")
    if opts.keep:
        print(f"program files are kept in {tmpdir}")
    try:
        return run_main(opts, tmpdir)
    finally:
        if not opts.keep:
            shutil.rmtree(tmpdir, ignore_errors=True)


def run_main(opts, tmpdir):
    global BINARY
    if (opts.fork or opts.shrink or opts.shrink_file) and not opts.no_snapshot:
        BINARY, st = snapshot_binary(tmpdir)
        print(f"binary: {os.environ.get('DYNREPL') or 'build/repl/dynrepl'} "
              f"({st.st_size} bytes, modified {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(st.st_mtime))}),"
              f" children run a copy", flush=True)

    if opts.shrink_file:
        with open(opts.shrink_file) as fh:
            src = fh.read()
        path = os.path.join(tmpdir, "original.py")
        with open(path, "w") as fh:
            fh.write(src)
        res = run_child(path, opts.backend, opts.timeout)
        if not res["diffs"]:
            print("the program passes: nothing to shrink\n1 passed, 0 failed")
            return 0
        kind = kind_of(res)
        small, res = shrink_text(src, kind, opts.backend, opts.timeout, tmpdir)
        print(f"==== minimal repro for: {kind}\n{small}\n---- differences ----\n{format_diffs(None, res)}")
        print("0 passed, 1 failed")
        return 1

    global CALLS
    CALLS = opts.calls
    indices = [opts.one] if opts.one is not None else list(range(opts.programs))
    progs = {k: generate(opts.seed, k) for k in indices}
    results = {}

    def run_one(k):
        path = write_program(progs[k], tmpdir)
        return run_child(path, opts.backend, opts.timeout) if opts.fork else check_file(path, opts.backend)

    def report(k, res):
        prog = progs[k]
        if opts.show or opts.one is not None:
            print(f"---- program {k} ----\n{prog.source()}")
        if res["diffs"]:
            print(f"FAIL program {k} (seed {opts.seed}): {kind_of(res)}")
            if not (opts.show or opts.one is not None):
                print("---- program ----\n" + prog.source(main=False))
            print("---- differences ----\n" + format_diffs(prog, res) + "\n", flush=True)
        elif opts.one is not None:
            print(f"PASS program {k}")

    if opts.fork and opts.jobs > 1 and len(indices) > 1:
        with concurrent.futures.ThreadPoolExecutor(opts.jobs) as ex:
            for k, res in zip(indices, ex.map(run_one, indices)):
                results[k] = res
                report(k, res)
    else:
        for k in indices:
            results[k] = run_one(k)
            report(k, results[k])

    failed = [k for k in indices if results[k]["diffs"]]
    outcomes = {}
    for k in indices:
        for o in results[k].get("eager", []):
            outcomes[o] = outcomes.get(o, 0) + 1
    print("eager outcomes of the calls: " + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items(), key=lambda x: -x[1])))
    if failed:
        kinds = {}
        for k in failed:
            kinds.setdefault(kind_of(results[k]), []).append(k)
        print("failure kinds (count, shortest program):")
        for kind, ks in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            best = min(ks, key=lambda k: progs[k].size())
            print(f"  {len(ks):4d}  {kind}   (program {best})")
        if opts.shrink:
            for kind, ks in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
                best = min(ks, key=lambda k: progs[k].size())
                small, res = shrink(progs[best], kind, opts.backend, opts.timeout, tmpdir)
                text, res2 = shrink_text(small.source(), kind, opts.backend, opts.timeout, tmpdir, budget=60)
                if kind_of(res2) == kind:
                    res = res2
                else:  # (cannot happen unless the failure is flaky)
                    text = small.source()
                print(f"\n==== minimal repro for: {kind}  (from program {best})")
                print(text)
                print("---- differences ----\n" + format_diffs(None, res))
    print(f"{len(indices) - len(failed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
