"""Stale-graph fuzzer for dyn.compile (issue 15): random call SEQUENCES against one compiled function,
with eager mode as the oracle.

Each random program is a function body (a plain function `fn(x, y, s[, z])` in a closure, or the
`forward` of a dyn.nn.Module) over a vocabulary of tensor ops (elementwise, broadcasting, reductions
with keepdim, views/permutes/transposes, indexing and slicing, matmul, creation ops that follow the
default dtype or take Python numbers, in-place writes to the arguments, to views of them and to
tensors from outside, backward) and Python control flow that reads state from outside: globals GI
(int), GF (float), GB (bool), GT (a tensor), a closure cell `cell` (an int, float, bool or tensor),
module attributes (`self.scale`, `self.k`, `self.training`, a tensor attribute `buf`, a parameter
`w`), the Python scalar argument `s`, sizes (`x.shape[0]`), dtypes, strides, `x is y`,
requires_grad, grad mode and the default dtype (also changed inside the function), early returns and
graph breaks (.item(), if on a tensor, print, .tolist(), dyn.sync()). Shapes are tracked
symbolically (dims n, m, 1) so that most calls run; the rest raise, eagerly and compiled alike.

Then a sequence of 8-15 calls. Between two calls some of these change: the sizes n, m (automatic
dynamic shapes; ints from outside sometimes follow a size), the dtypes of the arguments (float32,
float64, int64), their layout (transposed, strided, offset, expanded views), the aliasing of x and y
(the same tensor, overlapping windows of one tensor, a view, a detached alias), requires_grad, the
tensor objects themselves (the same objects passed again with new values, or new ones), `s` (int,
float, bool; by keyword or not), the globals, the closure cell, the module attributes, train() /
eval(), the parameter's requires_grad, dtype and identity, grad mode (no_grad, set_grad_enabled,
inference_mode) and the default dtype; some calls change nothing and some go back to the state of an
earlier call (an older cache entry must serve it). Some programs compile with cache_limit=64,
dynamic=True/False, backend="eager" or a dyn.mark_dynamic dim; some have globals named like the
attributes the function reads (`k`, `scale`, `training`) that change at every call.

Every call runs eagerly (the uncompiled function) and compiled, each on its own copy of the inputs
made the same way, after the same setup of the outside state, and compares bit for bit: the return
values (dtype, shape, bytes, requires_grad, is_leaf, which are / share memory with arguments), the
arguments after the call, their .grad, and the outside tensors (GT, the buffer, the parameter and
its .grad, a tensor closure cell). An exception counts as equal when eager and compiled raise the
same type (then the state after it is compared too).

Every recompile event (dyn.debug.events('recompile')) must name a cause, and what it names is
checked against the calls as they really were: a named Python value must be one the function reads,
read at the line the event says, with the event's value at this call and its "first traced with"
value seen at an earlier call; a tensor's size / dtype / strides / requires_grad / number of
dimensions and grad mode / default dtype must be this call's; a cause's hint must not be another
guard's (grad mode, default dtype). Each older entry's failed guard must report this call's real
value as `actual`, and its "because `X` changed" must name a value the function reads, at a line
that reads it. Causes that name no value (an op changed, a branch went the other way) cannot be
checked; the summary counts them.

Each program is a standalone script (printed on failure; run it with dynrepl to see each call's
eager and compiled results compared and the recompile events).

    build/repl/dynrepl --batch tests/fuzz/stale_graph.py --programs 200 --seed 0
    build/repl/dynrepl --batch tests/fuzz/stale_graph.py --seed 0 --one 17      # program 17, shown
    build/repl/dynrepl --batch tests/fuzz/stale_graph.py --seed 0 --one 17 --write /tmp/p17.py
    build/repl/dynrepl --batch tests/fuzz/stale_graph.py --programs 50 --show   # every source
    build/repl/dynrepl --batch tests/fuzz/stale_graph.py --programs 100000 --time-limit 1200

Programs run in this process (a crash ends the run: the program that crashed is the newest file in
/tmp/stale_graph_*/; rerun it with --one K). Failures are grouped by kind; the first --reports (2) of each kind are printed in full. The summary
gives the counts (calls, cache hits, recompiles, graph breaks, ... from dyn.debug.counters()) that
show the sequences are not vacuous. The last line is `N sequences passed, M failed`; the exit
status is 1 if M > 0 (--quiet-reasons: only differences from eager count).
"""
import argparse
import ast
import os
import random
import re
import runpy
import shutil
import struct
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np

import dyn


# ----------------------------------------------------------------------------------------------
# Symbolic shapes: a tuple of dims, each 'n' or 'm' (the sizes the calls vary), 1, or an opaque
# name 'o<k>' (a size the generator does not follow: a slice, a cat...). Two tensors are combined
# only when their symbolic shapes broadcast.


def bcast(a, b):
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da == db:
            out.append(da)
        elif da == 1:
            out.append(db)
        elif db == 1:
            out.append(da)
        else:
            return None
    return tuple(reversed(out))


def fits_into(q, shape):
    """q broadcasts to exactly shape (an in-place operand)."""
    return len(q) <= len(shape) and bcast(q, shape) == tuple(shape)


class Var:
    def __init__(self, name, shape, arg=False):
        self.name, self.shape, self.arg = name, tuple(shape), arg


Y_SHAPES = [(("n", "m"), 6), ((1, "m"), 1.5), (("m",), 1.5), (("n", 1), 1)]

# knob values (the state of one call)
N_SIZES = [1, 2, 3, 4, 5, 6]
M_SIZES = [1, 2, 3, 4, 5]
DTYPES = [("float32", 7), ("float64", 2), ("int64", 1)]
# --dtypes all (the default) adds these; --dtypes classic keeps the list programs were pinned with.
MORE_DTYPES = [("float16", 1), ("bfloat16", 1), ("int32", 1)]
LAYOUTS = [("contig", 10), ("t", 4), ("step", 3), ("offset", 3), ("expand", 1)]
ALIASES = [("none", 10), ("same", 3), ("overlap", 2), ("view", 3), ("detach", 2)]
S_VALUES = [0.5, -1.5, 2, 2.0, 3, 0.25, -1, True]
GI_VALUES = [0, 1, 2, 3]
GF_VALUES = [0.5, -0.25, 2.0, 1.0]
CELL_VALUES = {"int": [0, 1, 2, 3], "float": [0.5, 1.5, -2.0], "bool": [True, False],
               # a tensor in the closure cell: (value, dtype, which of two objects)
               "tensor": [(1.5, "float32", 0), (-0.5, "float32", 1), (2.0, "float64", 0), (0.25, "float32", 0)]}
SCALE_VALUES = [0.5, 1.5, 2, -1.0]
K_VALUES = [0, 1, 2]
GRAD_MODES = [("on", 6), ("no_grad", 3), ("off", 1.5), ("inference", 0.7)]
TVALS = [1.0, -0.5, 2.5]
W_VALUES = [0.75, -1.25]

# knob -> weight (multiplied when the body reads the thing)
KNOBS = {"n": 2.5, "m": 2.0, "dtype": 2.0, "layout": 2.0, "alias": 2.0, "rg": 2.0, "s": 1.5, "GI": 1.0,
         "GF": 0.7, "GB": 0.7, "cell": 1.0, "scale": 0.7, "k": 0.7, "training": 1.0, "grad": 2.0, "ddt": 1.2,
         "gt": 0.6, "buf": 0.6, "w": 0.3, "w_rg": 0.4, "w_dtype": 0.4, "w_obj": 0.4, "kw": 0.8, "keep": 0.8}
KNOB_READS = {"GI": r"\bGI\b", "GF": r"\bGF\b", "GB": r"\bGB\b", "cell": r"\bcell\b", "scale": r"\.scale\b",
              "k": r"\.k\b", "training": r"\.training\b", "gt": r"\bGT\b", "buf": r"\.buf\b", "w": r"\.w\b",
              "s": r"\bs\b", "ddt": r"default_dtype|dyn\.(ones|zeros|full|arange|tensor|linspace)\(",
              "grad": r"grad|backward", "w_rg": r"\.w\b", "w_dtype": r"\.w\b", "w_obj": r"\.w\b"}


def wchoice(r, pairs):
    vals, ws = zip(*pairs)
    return r.choices(vals, ws)[0]


class Gen:
    """Generates one program's body (lines relative to the function body) with symbolic shapes."""

    def __init__(self, r, form, yshape, has_z, cell_type):
        self.r = r
        self.M = "self" if form == "module" else "model"
        self.cell_type = cell_type
        self.n = 0
        self.pool = [Var("x", ("n", "m"), True), Var("y", yshape, True)]
        if has_z:
            self.pool.append(Var("z", ("m", "n"), True))
        self.outside = [Var("GT", (1,), True), Var(f"{self.M}.buf", (1,), True)]
        if cell_type == "tensor":
            self.outside.append(Var("cell", (1,), True))
        self.scalars = []  # names of Python numbers from .item()
        self.int_items = []  # names of Python ints from int(t.item()): a recompile names them
        self.extras = []  # returnable non-tensor values
        self.backward_done = False

    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def opaque(self):
        self.n += 1
        return f"o{self.n}"

    # -- leaves
    def scalar(self):
        r = self.r
        c = ["s", "s", "GF", "GI", f"{self.M}.scale", "2.0", "0.5", "-1.5", "float(GB)", "3"]
        if self.cell_type in ("int", "float"):
            c += ["cell", "cell"]
        if self.scalars and r.random() < 0.3:
            return r.choice(self.scalars)
        return r.choice(c)

    def int_source(self):
        c = ["GI", f"{self.M}.k", "x.shape[0]", "y.shape[-1]", "min(x.shape[0], 3)", "int(s)"]
        if self.cell_type == "int":
            c += ["cell", "cell"]
        return self.r.choice(c)

    def int_const(self):
        """An int an op bakes in as a constant: from outside, or read from a tensor by .item()."""
        if self.int_items and self.r.random() < 0.4:
            return self.r.choice(self.int_items)
        return self.int_source()

    def cond(self):
        r = self.r
        M = self.M
        c = ["GB", "not GB", "GI > 1", "GI == 0", f"{M}.training", f"not {M}.training", "s > 0",
             "isinstance(s, float)", "x.shape[0] > 2", "x.shape[1] == 1", "x.shape[0] == x.shape[1]",
             "y.dim() == 2", "x.dtype == dyn.float64", "y.dtype != dyn.int64",
             "x.is_contiguous()", "y.is_contiguous()", "x.requires_grad", "y.requires_grad",
             "dyn.is_grad_enabled()", "dyn.get_default_dtype() == dyn.float64", "GT.dtype == dyn.float64",
             f"{M}.k > 0", f"{M}.scale > 1", "GF > 0", "x.stride(0) == 1", "x is y",
             f"{M}.buf.dtype == dyn.float32", "y.shape[0] > 1", "x.numel() > 6"]
        if self.scalars:  # a value from .item() (a graph break before it)
            c += [f"{r.choice(self.scalars)} > 0"] * 2
        if self.cell_type == "int":
            c += ["cell > 1", "cell == 0"]
        elif self.cell_type == "float":
            c += ["cell > 0"]
        elif self.cell_type == "bool":
            c += ["cell", "not cell"]
        else:
            c += ["cell.dtype == dyn.float64"]
        return r.choice(c)

    def pick(self, pred=None, prefer_tmp=0.6):
        cands = [v for v in self.pool if pred is None or pred(v)]
        if not cands:
            return None
        tmps = [v for v in cands if not v.arg]
        if tmps and self.r.random() < prefer_tmp:
            return self.r.choice(tmps[-4:])
        return self.r.choice(cands)

    # -- expressions: (text, symbolic shape)
    def unary(self, p):
        r = self.r
        P, rank = p.name, len(p.shape)
        S = self.scalar()
        t = [f"{P}.relu()", f"{P}.sigmoid()", f"{P}.tanh()", f"{P}.abs()", f"-{P}", f"{P}.sin()",
             f"{P}.clamp(-1.0, 1.0)", f"{P} * {S}", f"{P} + {S}", f"{P}.pow(2)", f"{P}.abs().sqrt()",
             f"{P}.clone()", f"{P}.detach()", f"{P}[...]", f"{P}.contiguous()", f"({P} * 0.5).exp()",
             f"{P} / 3.0", f"{P}.square()", f"{P}.floor()", f"{P}.masked_fill({P} > 0, 0.5)",
             f"{P} * {S} + {self.scalar()}", f"{P}.clamp(min={S})", f"dyn.where({P} > 0, {P}, {S})",
             f"{P} - {S} * {P}", f"{P} * {self.int_const()}", f"{P} + {self.int_const()}",
             f"{P} * (x.shape[0] / 4)", f"{P} / x.shape[-1]", f"{P}.abs() ** {S}", f"{P}.abs().pow(GF)",
             f"{P}.clamp(max={S})", f"{P}.masked_fill({P} < 0, {S})", f"{P}.lerp({P}.tanh(), GF)" if rank else f"{P} * 1.5"]
        if rank >= 1:
            t += [f"{P}.softmax(-1)", f"{P}.log_softmax(-1)", f"{P}.cumsum(-1)", f"{P}.flip(0)", f"{P}.roll(1, 0)",
                  f"{P} - {P}.mean(-1, keepdim=True)", f"{P} * {P}.amax(0, keepdim=True)",
                  f"{P}.unsqueeze(0).squeeze(0)", f"{P}.reshape(-1).reshape({P}.shape)",
                  f"{P}.flatten().reshape({P}.shape)", f"{P} + {P}.sum(-1, keepdim=True)",
                  f"{P} * {P}.amin(-1, keepdim=True)", f"{P}.roll({self.int_source()}, 0)",
                  f"{P} * dyn.arange({P}.shape[-1])", f"{P} + dyn.full(({P}.shape[-1],), {S})"]
        if rank == 2:
            t += [f"{P}.t().t()", f"{P}.transpose(0, 1).contiguous().transpose(0, 1)",
                  f"{P}.permute(1, 0).permute(1, 0)", f"{P}.tril()", f"{P}.triu(1)",
                  f"{P} / ({P}.abs().sum(1, keepdim=True) + 1.0)", f"{P}.softmax(0)",
                  f"{P}.view({P}.shape)", f"{P} - {P}.mean(0, keepdim=True)", f"{P}.mT.mT",
                  f"{P}.amax(1, keepdim=True) - {P}", f"{P}.tril({self.int_source()})",
                  f"{P}.triu(-GI)", f"{P}.reshape({P}.shape[0], -1)", f"{P}.reshape(x.shape[0], -1)" if p.shape[0] == "n" else f"{P} * 0.5"]
        # things from outside: the global tensor, the buffer, the parameter (all shape (1,))
        outside = [f"{P} * GT", f"{P} + {self.M}.buf", f"{P} * {self.M}.w"] + \
            ([f"{P} * cell", f"{P} - cell"] if self.cell_type == "tensor" else [])
        if r.random() < 0.2:
            e = r.choice(outside)
            return e, bcast(p.shape, (1,))
        return r.choice(t), p.shape

    def binary(self, p, q):
        P, Q = p.name, q.name
        t = [f"{P} + {Q}", f"{P} * {Q}", f"{P} - {Q} * 0.5", f"{P}.maximum({Q})", f"dyn.where({P} > {Q}, {P}, {Q})",
             f"{P} / ({Q}.abs() + 1.0)", f"{P}.atan2({Q})", f"({P} - {Q}).relu()", f"{P} * {Q}.sigmoid()",
             f"{P}.minimum({Q}) * {self.scalar()}", f"dyn.where({Q} > 0, {P}, 0.0)"]
        return self.r.choice(t), bcast(p.shape, q.shape)

    def reshaping(self, p):
        """An expression with another shape than p's."""
        r = self.r
        P, sh = p.name, p.shape
        opts = []
        if len(sh) == 2:
            a, b = sh
            opts += [(f"{P}.t()", (b, a)), (f"{P}.transpose(0, 1)", (b, a)), (f"{P}.permute(1, 0)", (b, a)),
                     (f"{P}.T", (b, a)), (f"{P}.sum(0)", (b,)), (f"{P}.mean(1)", (a,)),
                     (f"{P}.sum(0, keepdim=True)", (1, b)), (f"{P}.amax(1, keepdim=True)", (a, 1)),
                     (f"{P}.mean(dim=(0, 1), keepdim=True)", (1, 1)),
                     (f"{P}[0]", (b,)), (f"{P}[:, -1]", (a,)), (f"{P}[-1:]", (1, b)), (f"{P}[:, :1]", (a, 1)),
                     (f"{P}.sum()", ()), (f"{P}[1:]", (self.opaque(), b)), (f"{P}[::2]", (self.opaque(), b)),
                     (f"{P}[:GI]", (self.opaque(), b)), (f"{P}[:, :{self.M}.k]", (a, self.opaque())),
                     (f"{P}[: x.shape[0] // 2]", (self.opaque(), b)), (f"{P}.unsqueeze(0)", (1, a, b)),
                     (f"{P}.reshape(-1)", (self.opaque(),)), (f"{P}.flatten()", (self.opaque(),)),
                     (f"{P}.amax(0)", (b,)), (f"{P}.max(1).values", (a,)), (f"{P}.argmax(-1)", (a,)),
                     (f"dyn.cat([{P}, {P} * 2.0], 0)", (self.opaque(), b)),
                     (f"dyn.stack([{P}, {P}.relu()])", (self.opaque(), a, b)),
                     (f"{P}.narrow(1, 0, 1)", (a, 1)), (f"{P}[..., -1:]", (a, 1)),
                     (f"{P}[:{self.int_source()}]", (self.opaque(), b)), (f"{P}[:, -{self.int_source()}:]", (a, self.opaque())),
                     (f"{P}.narrow(0, 0, min(GI, {P}.shape[0]))", (self.opaque(), b)),
                     (f"{P}.reshape(-1)[:GI * 2]", (self.opaque(),)), (f"{P}[{P}.shape[0] // 2:]", (self.opaque(), b)),
                     (f"{P}.view(-1, {P}.shape[-1])" if len(sh) == 2 else f"{P}.reshape(-1)", (self.opaque(), b))]
            for q in self.pool:
                if len(q.shape) == 2 and q.shape[0] == b:
                    opts.append((f"{P} @ {q.name}", (a, q.shape[1])))
                if len(q.shape) == 2 and q.shape[1] == b:
                    opts.append((f"{P} @ {q.name}.t()", (a, q.shape[0])))
                if len(q.shape) == 2 and q.shape[0] == a:
                    opts.append((f"{P}.t() @ {q.name}", (b, q.shape[1])))
                if len(q.shape) == 1 and q.shape[0] == b:
                    opts.append((f"{P} @ {q.name}", (a,)))
                if q.shape == sh and q is not p:
                    opts.append((f"dyn.cat([{P}, {q.name}], 1)", (a, self.opaque())))
        elif len(sh) == 1:
            (a,) = sh
            opts += [(f"{P}.sum()", ()), (f"{P}[0]", ()), (f"{P}.unsqueeze(0)", (1, a)), (f"{P}.unsqueeze(1)", (a, 1)),
                     (f"{P}[:GI]", (self.opaque(),)), (f"{P}[1:]", (self.opaque(),)), (f"{P}.amax(0)", ()),
                     (f"{P}.view(1, -1)", (1, a))]
            for q in self.pool:
                if q.shape == sh and q is not p:
                    opts.append((f"{P} @ {q.name}", ()))
                if len(q.shape) == 2 and q.shape[0] == a:
                    opts.append((f"{P} @ {q.name}", (q.shape[1],)))
        elif len(sh) == 0:
            opts += [(f"{P}.unsqueeze(0)", (1,)), (f"{P}.reshape(1, 1)", (1, 1))]
        else:
            opts += [(f"{P}.sum(0)", sh[1:]), (f"{P}[0]", sh[1:]), (f"{P}.squeeze(0)" if sh[0] == 1 else f"{P}[-1]", sh[1:])]
        return r.choice(opts)

    def creation(self):
        r = self.r
        S = self.scalar()
        M = self.M
        opts = [("dyn.ones(x.shape)", ("n", "m")), ("dyn.zeros(x.shape[-1])", ("m",)),
                (f"dyn.full(x.shape, {S})", ("n", "m")), ("dyn.arange(x.shape[1])", ("m",)),
                ("dyn.arange(x.shape[0]) * 0.5", ("n",)), (f"dyn.tensor({S})", ()),
                ("dyn.tensor([GF, 1.0, 2.0])[:1]", (1,)), ("dyn.linspace(0, 1, x.shape[1])", ("m",)),
                ("x.new_ones(x.shape)", ("n", "m")), (f"dyn.full((1,), {S})", (1,)),
                ("dyn.ones(y.shape) * 0.5", self.var("y").shape), ("dyn.arange(0.0, x.shape[1])", ("m",)),
                (f"dyn.zeros(x.shape[0], 1) + {M}.w", ("n", 1)), ("dyn.ones_like(x) * GF", ("n", "m")),
                ("dyn.arange(0.0, GF * 4 + 1)", (self.opaque(),)), (f"dyn.linspace(0, {S}, 3)", (self.opaque(),)),
                (f"dyn.tensor([{S}, GF])", (self.opaque(),)), (f"dyn.arange({self.int_source()})", (self.opaque(),)),
                (f"dyn.ones({self.int_source()}, x.shape[1])", (self.opaque(), "m")),
                (f"x.new_full(x.shape, {S})", ("n", "m")), (f"dyn.full((x.shape[0], 1), {S})", ("n", 1))]
        return r.choice(opts)

    def var(self, name):
        return next(v for v in self.pool if v.name == name)

    def expr(self):
        """(text, shape) of a random tensor expression over the pool."""
        r = self.r
        x = r.random()
        if x < 0.35:
            return self.unary(self.pick())
        if x < 0.6:
            p = self.pick()
            q = self.pick(lambda v: v is not p and bcast(v.shape, p.shape) is not None, prefer_tmp=0.5)
            if q is not None:
                return self.binary(p, q)
            return self.unary(p)
        if x < 0.88:
            return self.reshaping(self.pick(prefer_tmp=0.4))
        return self.creation()

    def same_shape_expr(self, v):
        """An expression with v's shape, mostly reading v."""
        r = self.r
        for _ in range(6):
            if r.random() < 0.55:
                e, sh = self.unary(v)
            else:
                q = self.pick(lambda u: u is not v and bcast(u.shape, v.shape) == v.shape)
                if q is None:
                    continue
                e, sh = self.binary(v, q)
            if sh == v.shape:
                return e
        return f"{v.name} * {self.scalar()}"

    # -- statements (lists of lines)
    def compute(self):
        e, sh = self.expr()
        name = self.fresh("t")
        self.pool.append(Var(name, sh))
        return [f"{name} = {e}"]

    def reassign(self, v=None, may_create=True):
        v = v or self.pick(lambda u: not u.arg, prefer_tmp=1.0)
        if v is None:
            return self.compute() if may_create else self.inplace()
        return [f"{v.name} = {self.same_shape_expr(v)}"]

    def views(self, v):
        T, sh = v.name, v.shape
        if len(sh) == 2:
            a, b = sh
            return [(T, sh), (T, sh), (f"{T}[0]", (b,)), (f"{T}[:, 0]", (a,)), (f"{T}.t()", (b, a)),
                    (f"{T}[-1:]", (1, b)), (f"{T}[:, :1]", (a, 1)), (f"{T}[1:]", ("o_v", b)),
                    (f"{T}[:, ::2]", (a, "o_v")), (f"{T}.T[0]", (a,)), (f"{T}[...]", sh), (f"{T}.detach()", sh),
                    (f"{T}.unsqueeze(0)", (1, a, b)), (f"{T}.view({T}.shape)", sh), (f"{T}.permute(1, 0)[0]", (a,))]
        if len(sh) == 1:
            (a,) = sh
            return [(T, sh), (T, sh), (f"{T}[0]", ()), (f"{T}[1:]", ("o_v",)), (f"{T}[::2]", ("o_v",)),
                    (f"{T}.unsqueeze(0)", (1, a)), (f"{T}[-1:]", (1,))]
        return [(T, sh)]

    def inplace_line(self, target=None):
        r = self.r
        v = target or self.pick(prefer_tmp=0.3 if r.random() < 0.7 else 0.9)
        if target is None and r.random() < 0.08:  # a tensor from outside (a global, a module attribute)
            v = r.choice(self.outside)
        if r.random() < 0.06 and len(v.shape) >= 1:  # an overlapping self-copy
            return f"{v.name}[1:].{r.choice(['copy_', 'add_', 'mul_'])}({v.name}[:-1])"
        T, vs = r.choice(self.views(v))
        ops = []
        q = self.pick(lambda u: fits_into(u.shape, vs), prefer_tmp=0.5)
        if q is None and "o_v" not in vs:
            # the same view of another tensor of the same shape
            q2 = self.pick(lambda u: u is not v and u.shape == v.shape)
            if q2 is not None:
                O = T.replace(v.name, q2.name, 1) if T.startswith(v.name) else q2.name
                q = Var(O, vs)
        O = q.name if q is not None else None
        S = self.scalar()
        aug = not T.endswith(")") and T not in ("GT", "cell")  # `a.t() += b` is not Python; `GT += b` makes GT local
        ops = [f"{T}.add_({S})", f"{T}.mul_({S})", f"{T}.div_(2.0)", f"{T}.clamp_(-1.0, 1.0)", f"{T}.zero_()",
               f"{T}.fill_({S})", f"{T}.sub_(0.25)"] + ([f"{T} += {S}", f"{T} *= {S}"] if aug else [])
        if O is not None:
            ops += [f"{T}.add_({O})", f"{T}.sub_({O})", f"{T}.mul_({O})", f"{T}.copy_({O})",
                    f"{T}.add_({O}, alpha=0.5)", f"{T}.copy_({O}.sigmoid())"]
            if aug:
                ops += [f"{T} += {O}", f"{T} -= {O} * 0.5"]
        if len(v.shape) >= 1:
            ops += [f"{v.name}[0] = {S}", f"{v.name}[-1:] = {S}", f"{v.name}[...] = {S}"]
        if len(v.shape) == 2:
            ops += [f"{v.name}[:, -1] = {S}", f"{v.name}[0, 0] = {S}"]
        return r.choice(ops)

    def inplace(self):
        r = self.r
        line = self.inplace_line()
        if r.random() < 0.7:  # (dyn refuses in-place ops on tensors that take part in autograd)
            return ["with dyn.no_grad():", "    " + line]
        return [line]

    def block(self, k=None):
        """One or two statements that do not create new pool variables (for if/else, loops)."""
        r = self.r
        out = []
        for _ in range(k or r.randint(1, 2)):
            if r.random() < 0.6:
                out += self.reassign(may_create=False)
            else:
                out += self.inplace()
        return out

    def if_stmt(self):
        r = self.r
        c = self.cond()
        if r.random() < 0.5:
            # both branches define the same new variable with the same shape
            e, sh = self.expr()
            name = self.fresh("t")
            tmp = Var(name, sh)
            alt = self.same_shape_expr(tmp).replace(name, f"({e})") if r.random() < 0.5 else None
            if alt is None:
                p = self.pick(lambda u: u.shape == sh)
                alt = self.same_shape_expr(p) if p is not None else f"({e}) * 2.0"
            self.pool.append(tmp)
            return [f"if {c}:", f"    {name} = {e}", "else:", f"    {name} = {alt}"]
        body = ["    " + x for x in self.block()]
        if r.random() < 0.5:
            return [f"if {c}:"] + body + ["else:"] + ["    " + x for x in self.block()]
        return [f"if {c}:"] + body

    def loop(self):
        k = self.int_source()
        v = self.pick(lambda u: not u.arg, prefer_tmp=1.0)
        pre = []
        if v is None:
            pre = self.compute()
            v = self.pool[-1]
        body = self.reassign(v) if self.r.random() < 0.75 else [self.inplace_line(v)]
        return pre + [f"for _ in range({k}):"] + ["    " + x for x in body]

    def grad_block(self):
        r = self.r
        head = r.choice(["with dyn.no_grad():", "with dyn.set_grad_enabled(GB):", "with dyn.enable_grad():",
                         "with dyn.set_grad_enabled(False):"])
        brk = self.simple_break()  # (made first: it reads only what exists before the block)
        inner = self.compute() if r.random() < 0.5 else [self.inplace_line()]
        if r.random() < 0.3:
            inner += [self.inplace_line()]
        if r.random() < 0.2:
            inner.insert(r.randint(0, len(inner)), brk)
        return [head] + ["    " + x for x in inner]

    def dtype_block(self):
        brk = self.simple_break()
        inner = self.compute()
        if self.r.random() < 0.3:
            inner.insert(self.r.randint(0, 1), brk)
        return (["prev = dyn.get_default_dtype()", "dyn.set_default_dtype(dyn.float64 if GB else dyn.float32)", "try:"]
                + ["    " + x for x in inner] + ["finally:", "    dyn.set_default_dtype(prev)"])

    def backward(self):
        r = self.r
        v = self.pick()
        loss = self.fresh("loss")
        form = r.choice([f"({v.name} * {self.M}.w).sum()", f"{v.name}.sum()", f"({v.name} ** 2).mean()",
                         f"({v.name}.float() * x.float()).sum()" if v.shape == ("n", "m") else f"{v.name}.abs().sum()"])
        self.backward_done = True
        out = [f"{loss} = {form}", f"if {loss}.requires_grad:", f"    {loss}.backward()"]
        if r.random() < 0.4:
            g = self.fresh("g")
            self.extras.append(g)
            out.append(f"{g} = {r.choice(['x', 'y', self.M + '.w'])}.grad")
        return out

    def simple_break(self):
        """A one-line graph break."""
        p = self.pick()
        return self.r.choice(["dyn.sync()", f"print({p.name}, file=io.StringIO())", f"_ = {p.name}.tolist()"])

    def graph_break(self):
        r = self.r
        p = self.pick()
        k = r.randrange(5)
        if k == 0 and r.random() < 0.3:
            i = self.fresh("i")
            self.int_items.append(i)
            self.extras.append(i)
            return [f"{i} = int({p.name}.sum().item())"]
        if k == 0:
            f = self.fresh("f")
            self.scalars.append(f)
            self.extras.append(f)
            return [f"{f} = {p.name}.sum().item()"]
        if k == 1:
            return [f"if {p.name}.sum() > 0:"] + ["    " + x for x in self.block(1)] + \
                   ["else:"] + ["    " + x for x in self.block(1)]
        if k == 2:
            return [f"print({p.name}, file=io.StringIO())"]
        if k == 3:
            l = self.fresh("l")
            self.extras.append(l)
            return [f"{l} = {p.name}.tolist()"]
        return ["dyn.sync()"]

    def body(self):
        r = self.r
        out = []
        for _ in range(r.randint(4, 10)):
            x = r.random()
            if x < 0.30:
                out += self.compute()
            elif x < 0.40:
                out += self.reassign()
            elif x < 0.55:
                out += self.inplace()
            elif x < 0.70:
                out += self.if_stmt()
            elif x < 0.76:
                out += self.loop()
            elif x < 0.82:
                out += self.grad_block()
            elif x < 0.85:
                out += self.dtype_block()
            elif x < 0.90 and not self.backward_done:
                out += self.backward()
            elif x < 0.93 and any(not v.arg for v in self.pool):
                v = self.pick(lambda u: not u.arg, prefer_tmp=1.0)
                out += [f"if {self.cond()}:", f"    return {v.name}, {self.scalar()}"]
            else:
                out += self.graph_break()
        tmps = [v.name for v in self.pool if not v.arg]
        ret = r.sample(tmps[-3:], min(len(tmps[-3:]), r.randint(1, 2))) if tmps else []
        if r.random() < 0.35:
            ret.append(r.choice(["x", "y", "x.t()", "x[0]", "y[...]", "x.detach()", "x.view(x.shape)"]))
        if r.random() < 0.2:
            ret.append(r.choice(["x.shape[0]", "s", "GI"]))
        ret += r.sample(self.extras, min(len(self.extras), 2))
        return out, list(dict.fromkeys(ret)) or ["x"]


# ----------------------------------------------------------------------------------------------
# Programs


class Program:
    def __init__(self, index, seed, form, yshape, has_z, cell_type, body, ret, calls, compile_kw):
        self.index, self.seed, self.form = index, seed, form
        self.yshape, self.has_z, self.cell_type = yshape, has_z, cell_type
        self.body, self.ret, self.calls, self.compile_kw = body, ret, calls, compile_kw

    def argnames(self):
        return ["x", "y", "s"] + (["z"] if self.has_z else [])

    def source(self, main=True):
        args = ", ".join(self.argnames())
        body = list(self.body) + [f"return {', '.join(self.ret)}"]
        indent = " " * (12 if self.form == "module" else 8)
        body = [indent + line for line in body]
        cell0 = self.calls[0]["cell"]
        head = f'''# stale_graph program {self.index} (seed {self.seed}): {self.form} form, {len(self.calls)} calls
# rerun: build/repl/dynrepl --batch tests/fuzz/stale_graph.py --seed {self.seed} --one {self.index}
# standalone: build/repl/dynrepl --batch THIS_FILE.py  (each call eager vs compiled)
import contextlib
import io
import struct

import numpy as np

import dyn

SEED, INDEX = {self.seed}, {self.index}
GI, GF, GB = 2, 0.5, True
k, scale, training = 0, 0.0, True  # globals fn never reads (named like the attributes it reads)
GT = dyn.tensor([1.0])


def make():
    cell = {cell0!r}

    class Model(dyn.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 0.5
            self.k = 1
            self.w = dyn.nn.Parameter(dyn.tensor([0.75]))
            self.buf = dyn.tensor([1.0])
'''
        if self.form == "module":
            head += f"\n        def forward(self, {args}):\n" + "\n".join(body) + "\n"
            fn = f"\n    def fn({args}):\n        return None\n"
        else:
            fn = f"\n    def fn({args}):\n" + "\n".join(body) + "\n"
        head += fn
        head += '''
    def set_cell(v):
        nonlocal cell
        cell = v

    return Model, fn, set_cell


Model, fn, set_cell = make()
model = Model()
'''
        head += f"TARGET = {'model' if self.form == 'module' else 'fn'}\n"
        head += f"COMPILE = {self.compile_kw!r}\n"
        head += f"Y_SHAPE = {self.yshape!r}\n"
        head += "CALLS = [\n" + "".join(f"    {c!r},\n" for c in self.calls) + "]\n"
        rest = '''

def setup(k):
    """The state outside the function for call k."""
    global GI, GF, GB, GT
    c = CALLS[k]
    GI, GF, GB = c["GI"], c["GF"], c["GB"]
    globals().update(k=c["decoy"], scale=c["decoy"] * 0.5, training=c["decoy"] % 2 == 0)
    if isinstance(c["cell"], tuple):  # a tensor (its values are written below)
        set_cell(obj("cell", c["cell"][2], c["cell"][1]))
    else:
        set_cell(c["cell"])
    model.scale, model.k = c["scale"], c["k"]
    model.train(c["training"])
    # tensors from outside: one of two objects per dtype (so a call may see the same object with
    # new values, or another object), values written in place
    GT = obj("GT", c["gt"][2], c["gt"][1])
    model.buf = obj("buf", c["buf"][2], c["buf"][1])
    model.w = obj("w", c["w_obj"], c["w_dtype"])
    with dyn.no_grad():
        if isinstance(c["cell"], tuple):
            obj("cell", c["cell"][2], c["cell"][1]).copy_(dyn.tensor([c["cell"][0]]))
        GT.copy_(dyn.tensor([c["gt"][0]]))
        model.buf.copy_(dyn.tensor([c["buf"][0]]))
        model.w.copy_(dyn.tensor([c["w"]]))
    model.w.requires_grad_(c["w_rg"])
    model.w.grad = None


OBJS = {}


def obj(name, which, dtype):
    key = (name, which, dtype)
    if key not in OBJS:
        t = dyn.zeros(1, dtype=getattr(dyn, dtype))
        OBJS[key] = dyn.nn.Parameter(t) if name == "w" else t
    return OBJS[key]


def outside():
    """The tensors from outside fn that it may read or write."""
    return [GT, model.buf, model.w, model.w.grad] + [OBJS[k] for k in sorted(OBJS) if k[0] == "cell"]


def call(f, args, k):
    """f(x, y, s[, z]); s (and z) by keyword when the call says so."""
    if CALLS[k]["kw"]:
        return f(*args[:2], **dict(zip(["s", "z"], args[2:])))
    return f(*args)


def make_arg(r, shape, dtype, layout):
    def data(sh):
        if dtype in ("int64", "int32"):
            return dyn.tensor(r.integers(-4, 5, sh).astype(dtype))
        if dtype == "bfloat16":  # numpy has none
            return dyn.tensor(r.standard_normal(sh).astype(np.float32)).bfloat16()
        return dyn.tensor(r.standard_normal(sh).astype(dtype))
    if layout == "t" and len(shape) == 2:
        return data(shape[::-1]).t()
    if layout in ("step", "t"):
        return data(shape[:-1] + (2 * shape[-1],))[..., ::2]
    if layout == "offset":
        return data((shape[0] + 1,) + shape[1:])[1:]
    if layout == "expand":
        return data((1,) + shape[1:]).expand(shape)
    return data(shape)


KEPT = {}


def keep(run, name, t, c):
    """With c["keep"]: pass the tensor object of the last call of this run again (same layout),
    with this call's values written into it."""
    old = KEPT.get((run, name))
    KEPT[(run, name)] = t
    if not c["keep"] or old is None or c["layout"][name] == "expand" or c["alias"] == "overlap":
        return t
    if (old.shape, old.stride(), old.dtype, old.requires_grad) != (t.shape, t.stride(), t.dtype, bool(c["rg"][name])):
        return t
    if not old.is_leaf:  # an in-place write in the body gave it history: a new tensor, as a program would pass
        return t
    with dyn.no_grad():
        old.copy_(t)
    KEPT[(run, name)] = old
    return old


def inputs(k, run="eager"):
    """The arguments for call k: the same values, layouts and aliasing each time (for each run,
    eager or compiled, with c["keep"] the same tensor objects as in the run's last call)."""
    c = CALLS[k]
    r = np.random.default_rng([SEED, INDEX, k])
    dims = {"n": c["n"], "m": c["m"], 1: 1}
    xs, ys = (c["n"], c["m"]), tuple(dims[d] for d in Y_SHAPE)
    x = keep(run, "x", make_arg(r, xs, c["dtype"]["x"], c["layout"]["x"]), c)
    y = keep(run, "y", make_arg(r, ys, c["dtype"]["y"], c["layout"]["y"]), c)
    alias = c["alias"]
    if alias == "same":
        y = x
    elif alias == "overlap":  # two overlapping windows of one tensor
        base = make_arg(r, (c["n"] + 1, c["m"]), c["dtype"]["x"], "contig")
        x, y = base[:-1], base[1:]
    elif alias == "view":
        y = {("n", "m"): lambda: x[...], (1, "m"): lambda: x[:1], ("m",): lambda: x[0],
             ("n", 1): lambda: x[:, :1]}[Y_SHAPE]()
    elif alias == "detach":
        y = x.detach()
    args = {"x": x, "y": y, "s": c["s"]}
    if "z" in c["dtype"]:
        args["z"] = make_arg(r, (c["m"], c["n"]), c["dtype"]["z"], c["layout"]["z"])
    if "mark_dynamic" in COMPILE:  # (not a dyn.compile argument: marks a dim of an argument)
        name, dim = COMPILE["mark_dynamic"]
        if dim < args[name].dim():
            dyn.mark_dynamic(args[name], dim)
    for name, t in args.items():
        if name != "s" and c["rg"].get(name) and t.is_floating_point() and t.is_leaf and not t.requires_grad:
            t.requires_grad_()
    return list(args.values())


@contextlib.contextmanager
def ctx(k):
    """Grad mode and default dtype of call k."""
    c = CALLS[k]
    prev = dyn.get_default_dtype()
    dyn.set_default_dtype(getattr(dyn, c["ddt"]))
    try:
        if c["grad"] == "no_grad":
            with dyn.no_grad():
                yield
        elif c["grad"] == "off":
            dyn.set_grad_enabled(False)
            try:
                yield
            finally:
                dyn.set_grad_enabled(True)
        elif c["grad"] == "inference":
            with dyn.inference_mode():
                yield
        else:
            yield
    finally:
        dyn.set_default_dtype(prev)
'''
        main_part = '''

def snap(v):
    if isinstance(v, dyn.Tensor):
        a = np.ascontiguousarray(v.detach().numpy())
        return (str(v.dtype), tuple(v.shape), v.requires_grad, v.is_leaf, a.tobytes().hex())
    if isinstance(v, (tuple, list)):
        return tuple(snap(u) for u in v)
    if isinstance(v, float):
        return struct.pack("<d", v).hex()
    return repr(v)


def run(f, k, label):
    setup(k)
    args = inputs(k, label)
    with ctx(k):
        dyn.manual_seed(k)
        try:
            out = ("returned", snap(call(f, args, k)))
        except Exception as e:
            out = ("raised", type(e).__name__)
    grads = [a.grad if isinstance(a, dyn.Tensor) else None for a in args]
    return {"out": out, "args": snap(args), "grads": snap(grads), "outside": snap(outside())}


def main():  # (a function: the globals k, scale, training belong to the program)
    compiled = dyn.compile(TARGET, **{key: v for key, v in COMPILE.items() if key != "mark_dynamic"})
    bad = 0
    for i in range(len(CALLS)):
        e, c = run(TARGET, i, "eager"), run(compiled, i, "compiled")
        diff = [key for key in e if e[key] != c[key]]
        print(f"call {i}: {'DIFFERENT ' + str(diff) if diff else 'same'}")
        bad += bool(diff)
        for key in diff:
            print(f"  {key} eager:    {e[key]}")
            print(f"  {key} compiled: {c[key]}")
    print(dyn.debug.counters())
    for ev in dyn.debug.events("recompile"):
        print(f"recompile: {ev['reason']} | cause: {ev['cause']}")
    print("FAILED" if bad else "all calls equal")


if __name__ == "__main__":
    main()
'''
        return head + rest + (main_part if main else "")


def random_state(r, has_z, cell_type, yshape):
    st = {"n": r.choice(N_SIZES), "m": r.choice(M_SIZES),
          "dtype": {a: wchoice(r, DTYPES) for a in ["x", "y"] + (["z"] if has_z else [])},
          "layout": {a: wchoice(r, LAYOUTS) for a in ["x", "y"] + (["z"] if has_z else [])},
          "alias": "none", "rg": {a: r.random() < 0.3 for a in ["x", "y"] + (["z"] if has_z else [])},
          "s": r.choice(S_VALUES), "GI": r.choice(GI_VALUES), "GF": r.choice(GF_VALUES), "GB": r.random() < 0.5,
          "cell": r.choice(CELL_VALUES[cell_type]), "scale": r.choice(SCALE_VALUES), "k": r.choice(K_VALUES),
          "training": r.random() < 0.6, "grad": wchoice(r, GRAD_MODES), "ddt": "float64" if r.random() < 0.2 else "float32",
          "gt": (r.choice(TVALS), "float64" if r.random() < 0.3 else "float32", 0),
          "buf": (r.choice(TVALS), "float64" if r.random() < 0.3 else "float32", 0), "w": r.choice(W_VALUES),
          "w_obj": 0, "keep": r.random() < 0.3,
          "w_rg": r.random() < 0.8, "w_dtype": "float64" if r.random() < 0.15 else "float32", "kw": r.random() < 0.2}
    if r.random() < 0.3:
        st["alias"] = pick_alias(r, yshape)
    if r.random() < 0.3:
        link(r, st, r.choice(["n", "m"]), cell_type)
    return st


def pick_alias(r, yshape):
    allowed = ["none", "view"] + (["same", "overlap", "detach"] if yshape == ("n", "m") else [])
    return wchoice(r, [(a, w) for a, w in ALIASES if a in allowed])


def change(r, st, knob, has_z, cell_type, yshape):
    st = {k: (dict(v) if isinstance(v, dict) else v) for k, v in st.items()}
    tensors = ["x", "y"] + (["z"] if has_z else [])
    other = lambda vals, cur: r.choice([v for v in vals if v != cur] or vals)  # noqa: E731
    if knob == "n":
        st["n"] = 0 if r.random() < 0.03 else other(N_SIZES, st["n"])
        if r.random() < 0.1:
            st["n"] = st["m"]
        link(r, st, "n", cell_type)
    elif knob == "m":
        st["m"] = other(M_SIZES, st["m"])
        link(r, st, "m", cell_type)
    elif knob == "dtype":
        a = r.choice(tensors)
        st["dtype"][a] = other([d for d, _ in DTYPES], st["dtype"][a])
    elif knob == "layout":
        a = r.choice(tensors)
        st["layout"][a] = other([d for d, w in LAYOUTS for _ in range(int(w))], st["layout"][a])
    elif knob == "alias":
        st["alias"] = other([pick_alias(r, yshape) for _ in range(4)] + ["none"], st["alias"])
    elif knob == "rg":
        a = r.choice(tensors)
        st["rg"][a] = not st["rg"][a]
    elif knob == "s":
        st["s"] = other(S_VALUES, st["s"])
    elif knob == "GI":
        st["GI"] = other(GI_VALUES, st["GI"])
    elif knob == "GF":
        st["GF"] = other(GF_VALUES, st["GF"])
    elif knob == "GB":
        st["GB"] = not st["GB"]
    elif knob == "cell":
        st["cell"] = other(CELL_VALUES[cell_type], st["cell"])
    elif knob == "scale":
        st["scale"] = other(SCALE_VALUES, st["scale"])
    elif knob == "k":
        st["k"] = other(K_VALUES, st["k"])
    elif knob == "training":
        st["training"] = not st["training"]
    elif knob == "grad":
        st["grad"] = other([g for g, _ in GRAD_MODES], st["grad"])
    elif knob == "ddt":
        st["ddt"] = "float64" if st["ddt"] == "float32" else "float32"
    elif knob in ("gt", "buf"):
        v, d, o = st[knob]
        x = r.random()
        if x < 0.4:
            st[knob] = (other(TVALS, v), d, o)
        elif x < 0.7:
            st[knob] = (v, "float64" if d == "float32" else "float32", o)
        else:
            st[knob] = (other(TVALS, v) if r.random() < 0.5 else v, d, 1 - o)
    elif knob == "w":
        st["w"] = other(W_VALUES, st["w"])
    elif knob in ("w_rg", "kw", "keep"):
        st[knob] = not st[knob]
    elif knob == "w_obj":
        st["w_obj"] = 1 - st["w_obj"]
    elif knob == "w_dtype":
        st["w_dtype"] = "float64" if st["w_dtype"] == "float32" else "float32"
    return st


def link(r, st, dim, cell_type):
    """Sometimes an int from outside follows a size (a constant that looks like a dynamic size)."""
    if r.random() < 0.25:
        knobs = ["GI", "k", "s"] + (["cell"] if cell_type == "int" else [])
        st[r.choice(knobs)] = st[dim]


def generate(seed, index):
    r = random.Random(seed * 1000003 + index * 7919 + 17)
    form = "module" if r.random() < 0.45 else "fn"
    yshape = wchoice(r, Y_SHAPES)
    has_z = r.random() < 0.3
    cell_type = r.choice(["int", "int", "float", "bool", "tensor"])
    g = Gen(r, form, yshape, has_z, cell_type)
    body, ret = g.body()
    text = "\n".join(body + ret)
    weights = {}
    for knob, w in KNOBS.items():
        pat = KNOB_READS.get(knob)
        weights[knob] = w * (3.0 if pat and re.search(pat, text) else 1.0)
    ncalls = r.randint(8, 15)
    calls = [random_state(r, has_z, cell_type, yshape)]
    for k in range(1, ncalls):
        x = r.random()
        if x < 0.18:
            st = calls[-1]
        elif x < 0.38 and k >= 2:
            st = r.choice(calls[:-1])
        else:
            st = calls[-1]
            for _ in range(r.choices([1, 2, 3], [70, 20, 10])[0]):
                knob = r.choices(list(weights), list(weights.values()))[0]
                st = change(r, st, knob, has_z, cell_type, yshape)
        if st["n"] == 0 and st["alias"] == "view":  # (x[0] of an empty x)
            st = dict(st, alias="none")
        calls.append(st)
    decoys = r.random() < 0.3
    calls = [dict(c, decoy=k if decoys else 0) for k, c in enumerate(calls)]
    compile_kw = {}
    x = r.random()
    if x < 0.7:
        compile_kw["cache_limit"] = 64
    if r.random() < 0.15:
        compile_kw["dynamic"] = r.choice([True, False])
    if r.random() < 0.1:
        compile_kw["backend"] = "eager"
    if r.random() < 0.12:
        compile_kw["mark_dynamic"] = r.choice([("x", 0), ("x", 1), ("y", 0)])
    return Program(index, seed, form, yshape, has_z, cell_type, body, ret, calls, compile_kw)


# ----------------------------------------------------------------------------------------------
# Running and comparing


def snap(x):
    """[key, display]: key is compared, display is shown in a diff."""
    if isinstance(x, dyn.Tensor):
        try:
            a = np.ascontiguousarray(x.detach().numpy())
            key = ("tensor", str(x.dtype), tuple(x.shape), bool(x.requires_grad), bool(x.is_leaf),
                   a.reshape(-1).view(np.uint8).tobytes())
            extra = (" requires_grad" if x.requires_grad else "") + ("" if x.is_leaf else " (non-leaf)")
            return key, f"{x.dtype} {list(x.shape)} {a.tolist()}{extra}"
        except Exception as e:  # noqa: BLE001
            return ("unreadable", type(e).__name__), f"<unreadable tensor: {type(e).__name__}: {e}>"
    if isinstance(x, float):
        return ("float", struct.pack("<d", x)), repr(x)
    if isinstance(x, (tuple, list)):
        kids = [snap(y) for y in x]
        return ((type(x).__name__, len(x)) + tuple(k for k, _ in kids),
                "(" + ", ".join(d for _, d in kids) + ")")
    if x is None or isinstance(x, (bool, int, str)):
        return (type(x).__name__, x), repr(x)
    return ("other", type(x).__name__, repr(x)), repr(x)


# The differential fuzzer's comparison of two snapshots (the same [kind, ...] layout).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from random_inplace import first_difference as what_differs  # noqa: E402


def short(s, n=300):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 3] + "..."


def run_call(ns, f, k, label, names=None):
    ns["setup"](k)
    args = ns["inputs"](k, label)
    rec = {"exc": None}
    with ns["ctx"](k):
        dyn.manual_seed(k)
        # the arguments as the call sees them (an in-place write with autograd may give one history)
        rec["entry_state"] = tstate(args, names, ns["CALLS"][k]) if names else None
        try:
            out = ns["call"](f, args, k)
            rec["out"] = snap(out)
            outs = out if isinstance(out, tuple) else (out,)
            rec["is_arg"] = [([i for i, a in enumerate(args) if o is a], shares(o, args))
                             for o in outs if isinstance(o, dyn.Tensor)]
        except Exception as e:  # noqa: BLE001
            rec["exc"] = (type(e).__name__, str(e))
    rec["args"] = [snap(a) for a in args]
    rec["grads"] = [snap(a.grad if isinstance(a, dyn.Tensor) else None) for a in args]
    rec["outside"] = [snap(t) for t in ns["outside"]()]
    return rec, args


def shares(o, args):
    try:
        return [i for i, a in enumerate(args) if isinstance(a, dyn.Tensor) and a.numel() and o.numel()
                and np.shares_memory(o.detach().numpy(), a.detach().numpy())]
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__]


def compare_call(e, c, names):
    """The differences of one call: [(what, eager, compiled)]."""
    out = []
    if e["exc"] or c["exc"]:
        if not (e["exc"] and c["exc"]):
            out.append(("outcome", f"raised {e['exc'][0]}: {e['exc'][1]}" if e["exc"] else f"returned {e['out'][1]}",
                        f"raised {c['exc'][0]}: {c['exc'][1]}" if c["exc"] else f"returned {c['out'][1]}"))
            return out
        if e["exc"][0] != c["exc"][0]:
            out.append(("exception type", f"{e['exc'][0]}: {e['exc'][1]}", f"{c['exc'][0]}: {c['exc'][1]}"))
    else:
        d = what_differs(e["out"][0], c["out"][0])
        if d:
            out.append((f"return value ({d})", e["out"][1], c["out"][1]))
        elif e["is_arg"] != c["is_arg"]:
            out.append(("outputs that are / share memory with arguments", e["is_arg"], c["is_arg"]))
    after = " (after the exception)" if e["exc"] else ""
    for i, (a, b) in enumerate(zip(e["args"], c["args"])):
        d = what_differs(a[0], b[0])
        if d:
            out.append((f"argument {names[i]} after the call{after} ({d})", a[1], b[1]))
    for i, (a, b) in enumerate(zip(e["grads"], c["grads"])):
        d = what_differs(a[0], b[0])
        if d:
            out.append((f"{names[i]}.grad{after} ({d})", a[1], b[1]))
    for label, a, b in zip(["GT", "model.buf", "model.w", "model.w.grad", "cell tensor", "cell tensor 2", "cell tensor 3"],
                           e["outside"], c["outside"]):
        d = what_differs(a[0], b[0])
        if d:
            out.append((f"{label} after the call{after} ({d})", a[1], b[1]))
    return out


# -- recompile reasons


def pystate(c):
    """The Python values a cause may name, as the engine prints them."""
    return {"GI": c["GI"], "GF": c["GF"], "GB": c["GB"], "cell": c["cell"], "s": c["s"], "scale": c["scale"],
            "k": c["k"], "training": c["training"]}


def tstate(args, names, c):
    st = {}
    for name, a in zip(names, args):
        if isinstance(a, dyn.Tensor):
            st[name] = {"dtype": str(a.dtype).replace("dyn.", ""), "shape": list(a.shape), "strides": list(a.stride()),
                        "requires_grad": bool(a.requires_grad)}
    return st


def same_value(text, v):
    """Does the engine's text for a Python value denote v?"""
    text = text.strip()
    if text == repr(v) or text == str(v):
        return True
    try:
        lit = ast.literal_eval(text)
    except Exception:  # noqa: BLE001
        return False
    return type(lit) is type(v) and lit == v


# the bare names a program's function can read (arguments, closure cell, globals); `self.x` / `model.x`
# are attributes
READABLE = {"x", "y", "z", "s", "cell", "GI", "GF", "GB", "GT", "model"}


def same_number(text, v):
    """A constant derived from v (int(s), a float's value): equal as numbers."""
    try:
        return float(ast.literal_eval(text.strip())) == float(v)
    except Exception:  # noqa: BLE001
        return same_value(text, v)


def name_key(name):
    """A Python source name from a cause: `GI`, `cell`, `s`, `model.scale`, `self.training` -> state key."""
    name = name.strip("`")
    if name in ("GI", "GF", "GB", "cell", "s"):
        return name
    m = re.fullmatch(r"[\w.\[\]']+\.(scale|k|training)", name)
    if m:
        return m.group(1)
    return None


class ReasonChecker:
    """Checks each recompile event of a sequence against the calls' real states."""

    def __init__(self, index, source=""):
        self.index = index
        self.lines = source.split("\n")
        self.history = []  # per compiled call: (pystate, tstate, grad enabled, default dtype)
        self.unparsed = {}  # cause keys we could not check (shape of the key -> example)
        self.categories = {}
        self.entry_call = {}  # cache entry -> the call (index into history) that recorded it
        self.dynamic = None  # the program's dynamic= (None, True, False)

    def note(self, cat):
        self.categories[cat] = self.categories.get(cat, 0) + 1

    def add_call(self, c, state):
        self.history.append((pystate(c), state, c["grad"] == "on", c["ddt"]))

    def seen_before(self, pred):
        return any(pred(h) for h in self.history[:-1])

    def entries_made(self, n_entries):
        """After a call: entries beyond those known were recorded by it."""
        for e in range(len(self.entry_call), n_entries):
            self.entry_call[e] = len(self.history) - 1

    def check_closest(self, ev):
        """The cause is the failure of the entry that came closest: an older entry that failed, and
        a tensor property's "first" is what that entry's call had (not the oldest entry's)."""
        closest = ev.get("closest", -1)
        fails = {f.get("entry"): f for f in ev.get("failures", ())}
        if len(fails) == 0 or (len(fails) == 1 and -1 in fails):
            return []
        if closest not in fails:
            return [f"recompile names closest entry {closest}, which is not among the failed entries {sorted(fails)}"]
        self.note("closest: checked")
        f = fails[closest]
        cause = ev.get("cause") or {}
        probs = []
        if not f.get("cause") and cause.get("first") != f.get("expected"):
            probs.append(f"cause first {cause.get('first')!r} is not the closest entry {closest}'s expected "
                         f"{f.get('expected')!r}")
        origin = self.entry_call.get(closest)
        m = re.fullmatch(r"dim (\d+) of tensor '([^']+)' \((\w+)\)", (cause.get("key") or "").strip())
        first = cause.get("first") or ""
        if origin is not None and m and re.fullmatch(r"\d+", first) and m.group(2) in self.history[origin][1]:
            shape = self.history[origin][1][m.group(2)]["shape"]
            d = int(m.group(1))
            # What that entry traced: its call's size, unless a later call kept the entry as a
            # prefix of its own (the shared segments then hold the older sizes).
            if d < len(shape) and str(shape[d]) != first and not any(
                    str(h[1].get(m.group(2), {}).get("shape", [None] * (d + 1))[d]) == first
                    for h in self.history[:origin]):
                probs.append(f"cause {cause.get('key')} says first {first!r}, but the closest entry {closest} was "
                             f"recorded by a call with size {shape[d]}")
        return probs

    def check_hints(self, ev):
        """A hint is printed only when it is true for this call."""
        probs = []
        dynamic_made = ev.get("dynamic") or ""
        for f in ev.get("failures", ()):
            hint = f.get("hint") or ""
            m = re.fullmatch(r"tensor '([^']+)' \((\w+)\) size mismatch at dim (\d+)", f.get("what", ""))
            if not m or not re.fullmatch(r"\d+", f.get("expected", "")):
                continue
            self.note("hint: a traced size")
            was, now = int(f["expected"]), int(f["actual"])
            if self.dynamic is False:
                if "dynamic=False" not in hint or "made dim" in hint:
                    probs.append(f"under dynamic=False the size hint says {hint!r}")
            elif min(was, now) < 2:
                if "specialized" not in hint or "made dim" in hint:
                    probs.append(f"a size {was} -> {now} (0 and 1 are specialized) has the hint {hint!r}")
            if "made dim" in hint and f"{m.group(1)}.size({m.group(3)}) became dynamic" not in dynamic_made:
                probs.append(f"the hint says the recompile made {m.group(1)}.size({m.group(3)}) dynamic; it made: "
                             f"{dynamic_made!r}")
        return probs

    def check_tensor_prop(self, name, prop, value, first, cur, where):
        """prop: ('dim', d) / 'dtype' / 'strides' / 'requires_grad' / 'ndim'. Returns problems."""
        names = [n.strip() for n in name.split("=")]  # 'x = y': one tensor passed as both (when traced)
        if not all(n in cur[1] for n in names):
            self.note(f"{where.split(' ')[0]}: a tensor that is not an argument (unchecked)")
            return []
        probs = []
        for base in names:
            p = self._check_tensor_prop(base, prop, value, first, cur, where)
            if not p:
                return []
            probs += p
        return probs[:1]

    def _check_tensor_prop(self, base, prop, value, first, cur, where):

        def get(ts, nm):
            t = ts.get(nm)
            if t is None:
                return None
            if isinstance(prop, tuple):
                return str(t["shape"][prop[1]]) if prop[1] < len(t["shape"]) else None
            if prop == "ndim":
                return str(len(t["shape"]))
            if prop == "requires_grad":
                return str(t["requires_grad"])
            if prop == "strides":
                return str(t["strides"])
            return t[prop]

        probs = []
        val_now = get(cur[1], base)
        if value is not None and str(val_now) not in (value, value.split(" ")[0]):
            probs.append(f"{where} says {prop} of '{base}' is {value!r}, but this call's is {val_now!r}")
        if first is not None and not re.search(r"\bs\d", first):
            if not self.seen_before(lambda h: get(h[1], base) is not None and
                                    str(get(h[1], base)) in (first, first.split(" ")[0])):
                probs.append(f"{where} says {prop} of '{base}' was first {first!r}, never seen at an earlier call")
        return probs

    def check_event(self, ev):
        """Problems with one recompile event of the last call ([] if fine)."""
        probs = []
        cur = self.history[-1]
        cause = ev.get("cause") or {}
        key = (cause.get("key") or "").strip()
        if not key:
            return [f"recompile names no cause: {short(ev.get('reason'))}"]
        value, first = cause.get("value"), cause.get("first")
        hint = cause.get("hint") or ""
        if key != "grad mode" and "grad mode" in hint:
            probs.append(f"cause {key} carries the hint of a grad-mode guard: {hint!r}")
        if key != "default dtype" and "set_default_dtype" in hint:
            probs.append(f"cause {key} carries the hint of a default-dtype guard: {hint!r}")
        return probs + self.check_cause(key, value, first, cur, cause.get("where") or "", cause.get("from") or "") + \
            self.check_closest(ev) + self.check_hints(ev)

    def check_used_at(self, name, where, what):
        """A Python value the function reads: a name it can see, read at the line the event says."""
        probs = []
        if "." not in name and name not in READABLE:
            probs.append(f"{what} names `{name}`, which the function does not read (not an argument, "
                         f"closure cell or global it uses)")
        m = re.search(r":(\d+)$", where or "")
        if m and self.lines and 0 < int(m.group(1)) <= len(self.lines):
            text = self.lines[int(m.group(1)) - 1]
            last = name.split(".")[-1]
            if not re.search(rf"\b{re.escape(last)}\b", text):
                probs.append(f"{what} says it is used at line {m.group(1)} `{text.strip()}`, which does not read it")
        return probs

    def check_cause(self, key, value, first, cur, where="", origin=""):
        probs = []
        m = re.fullmatch(r"`([^`]+)`", key)
        if m and origin:
            # A local Python read from a tensor at a graph break: stored there, from .item().
            self.note("cause: a value read by .item(), by name")
            fm = re.fullmatch(r"from \.item\(\) at .*:(\d+)", origin)
            line = self.lines[int(fm.group(1)) - 1] if fm and 0 < int(fm.group(1)) <= len(self.lines) else ""
            if not re.search(rf"\b{re.escape(m.group(1))}\s*=.*\.item\(\)", line):
                probs.append(f"cause {key} ({origin}): that line does not store .item() to it: {line.strip()!r}")
            if value == first:
                probs.append(f"cause {key}: value {value!r} and first {first!r} are the same")
            return probs
        if m:
            sk = name_key(m.group(1))
            self.note("cause: a Python value by name")
            probs += self.check_used_at(m.group(1), where, f"cause {key}")
            if sk is None:
                self.unparsed.setdefault("name " + m.group(1), (key, self.index))
                return probs
            if isinstance(cur[0][sk], tuple):  # a tensor in the closure cell
                return probs
            if not same_value(value, cur[0][sk]):
                probs.append(f"cause {key} says the value is {value!r}, but this call's is {cur[0][sk]!r}")
            if not self.seen_before(lambda h: same_value(first, h[0][sk])):
                probs.append(f"cause {key} says it was first traced with {first!r}, never seen at an earlier call")
            if same_value(value, cur[0][sk]) and same_value(first, cur[0][sk]):
                probs.append(f"cause {key}: value {value!r} and first {first!r} are the same")
            return probs
        m = re.fullmatch(r"dim (\d+) of tensor '([^']+)' \((\w+)\)", key)
        if m:
            self.note("cause: a size")
            return self.check_tensor_prop(m.group(2), ("dim", int(m.group(1))), value, first, cur, f"cause {key}")
        m = re.fullmatch(r"(?:the )?(dtype|strides|requires_grad|number of dimensions) of tensor '([^']+)' \((\w+)\)", key)
        if m:
            self.note(f"cause: the {m.group(1)} of a tensor")
            prop = {"number of dimensions": "ndim"}.get(m.group(1), m.group(1))
            return self.check_tensor_prop(m.group(2), prop, value, first, cur, f"cause {key}")
        if key == "grad mode":
            self.note("cause: grad mode")
            if value.startswith("enabled") != cur[2]:
                probs.append(f"cause grad mode says {value!r}, but grad mode is {'on' if cur[2] else 'off'}")
            return probs
        if key == "default dtype":
            self.note("cause: default dtype")
            if value != cur[3]:
                probs.append(f"cause default dtype says {value!r}, but it is {cur[3]}")
            if not self.seen_before(lambda h: h[3] == first):
                probs.append(f"cause default dtype says first {first!r}, never seen at an earlier call")
            return probs
        m = re.fullmatch(r"constant (?:'([^']+)' \((\w+)\) )?of (\w+) changed", key)
        if m:
            self.note("cause: a constant" + (" (named)" if m.group(1) else " (unnamed)"))
            if value == first:
                probs.append(f"cause {key}: value {value!r} and first {first!r} are the same")
            if m.group(1):
                sk = name_key(m.group(1))
                if sk is not None and not same_number(value, cur[0][sk]):
                    probs.append(f"cause {key} says {value!r}, but this call's {m.group(1)} is {cur[0][sk]!r}")
            return probs
        if re.match(r"op \d+ of segment \d+ changed", key):
            self.note("cause: an op changed (no value named)")
            return probs
        self.note("cause: other")
        self.unparsed.setdefault(re.sub(r"\d+", "#", re.sub(r"'[^']*'|`[^`]*`", "'…'", key)), (key, self.index))
        return probs

    def check_failures(self, ev):
        """Each older entry's failed guard must report this call's real value as `actual`."""
        probs = []
        cur = self.history[-1]
        for f in ev.get("failures", ()):
            what, actual = f.get("what", ""), f.get("actual", "")
            if f.get("guard") == "tensor_input":
                m = re.fullmatch(r"tensor '([^']+)' \((\w+)\) (dtype|strides \(memory layout\)|size mismatch at dim (\d+)|"
                                 r"requires_grad|number of dimensions)", what)
                if not m:
                    self.note("failure: tensor_input (unparsed)")
                    continue
                kind = m.group(3)
                prop = ("dim", int(m.group(4))) if m.group(4) else \
                    {"strides (memory layout)": "strides", "number of dimensions": "ndim"}.get(kind, kind)
                self.note("failure: tensor_input " + (kind if not m.group(4) else "size"))
                probs += self.check_tensor_prop(m.group(1), prop, actual, None, cur,
                                                f"entry {f.get('entry')}'s failure '{what}'")
            elif f.get("guard") == "global_state":
                self.note("failure: global_state " + what)
                if what == "grad mode" and actual.startswith("enabled") != cur[2]:
                    probs.append(f"entry {f.get('entry')}'s failure says grad mode {actual!r}, "
                                 f"but it is {'on' if cur[2] else 'off'}")
                if what == "default dtype" and actual != cur[3]:
                    probs.append(f"entry {f.get('entry')}'s failure says default dtype {actual!r}, but it is {cur[3]}")
            else:
                self.note(f"failure: {f.get('guard')}")
            if re.match(r"`[^`]+` \(from \.item\(\) at", f.get("cause") or ""):
                continue  # checked as the event's cause
            cm = re.match(r"`([^`]+)` changed from (.+) to (.+) \(used at ([^)]*)\)", f.get("cause") or "")
            if cm:
                probs += self.check_used_at(cm.group(1), cm.group(4), f"entry {f.get('entry')}'s failure cause")
                sk = name_key(cm.group(1))
                if sk is not None and isinstance(cur[0][sk], tuple):
                    continue
                if sk is not None and not same_value(cm.group(3), cur[0][sk]):
                    probs.append(f"entry {f.get('entry')}'s failure cause '{f['cause']}': this call's value is "
                                 f"{cur[0][sk]!r}")
        return probs


COUNTER_KEYS = ["calls", "cache_hits", "compiles", "recompiles", "graph_breaks", "guard_failures", "fallbacks"]


def describe_change(calls, k):
    return ", ".join(changes(calls, k)) or "nothing changed"


def changes(calls, k):
    if k == 0:
        return ["first call"]
    a, b = calls[k - 1], calls[k]
    ch = []
    for key in b:
        if key == "decoy":  # (the globals fn does not read change at every call of some programs)
            continue
        if a[key] != b[key]:
            if isinstance(b[key], dict):
                ch += [f"{key}[{n}] {a[key].get(n)!r}->{b[key][n]!r}" for n in b[key] if a[key].get(n) != b[key][n]]
            else:
                ch.append(f"{key} {a[key]!r}->{b[key]!r}")
    return ch


def check_program(prog, tmpdir, totals):
    path = os.path.join(tmpdir, f"stale_{prog.seed}_{prog.index}.py")
    with open(path, "w") as fh:
        fh.write(prog.source())
    result = {"diffs": [], "reasons": [], "harness": None}
    try:
        ns = runpy.run_path(path, run_name="stale_graph_program")
    except Exception:  # noqa: BLE001
        result["harness"] = "loading the program: " + traceback.format_exc()
        return result
    names = prog.argnames()
    checker = ReasonChecker(prog.index, prog.source())
    checker.dynamic = ns["COMPILE"].get("dynamic")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = dyn.compile(ns["TARGET"], **{k: v for k, v in ns["COMPILE"].items() if k != "mark_dynamic"})
            for k in range(len(prog.calls)):
                e, _ = run_call(ns, ns["TARGET"], k, "eager")
                n_ev = len(dyn.debug.events("recompile"))
                c0 = dyn.debug.counters()
                c, args_c = run_call(ns, compiled, k, "compiled", names)
                c1 = dyn.debug.counters()
                totals["seq_calls"] += 1
                totals["eager_raised"] += bool(e["exc"])
                if e["exc"]:
                    totals["exc_types"][e["exc"][0]] = totals["exc_types"].get(e["exc"][0], 0) + 1
                    msg = e["exc"][0] + ": " + re.sub(r"\d+", "#", e["exc"][1])[:90]
                    totals["exc_msgs"][msg] = totals["exc_msgs"].get(msg, 0) + 1
                d = compare_call(e, c, names)
                if d and not result["diffs"]:
                    result["diffs"] = [(k, x) for x in d]
                checker.add_call(prog.calls[k], c["entry_state"])
                checker.entries_made(len(dyn.debug.guards(compiled)))
                evs = dyn.debug.events("recompile")[n_ev:]
                for ev in evs:
                    probs = checker.check_event(ev) + checker.check_failures(ev)
                    for p in probs:
                        result["reasons"].append((k, p, ev))
                        kind = re.sub(r"'[^']*'|`[^`]*`|\[[^\]]*\]|\d+", "…", p)
                        totals["reason_probs"].setdefault(kind, []).append(prog.index)
                delta = {key: c1.get(key, 0) - c0.get(key, 0) for key in COUNTER_KEYS}
                if delta["recompiles"] != len(evs):
                    result["reasons"].append((k, f"counters say {delta['recompiles']} recompiles, "
                                                 f"{len(evs)} recompile events", None))
                totals["hit_calls"] += delta["cache_hits"] > 0 and delta["recompiles"] == 0 and delta["compiles"] == 0
                totals["recompile_calls"] += delta["recompiles"] > 0
                totals["fallback_calls"] += delta["fallbacks"] > 0
                if k > 0 and delta["recompiles"]:
                    for ch in changes(prog.calls, k) or ["nothing"]:
                        key = ch.split(" ")[0].split("[")[0]
                        totals["recompile_after"][key] = totals["recompile_after"].get(key, 0) + 1
        cnt = dyn.debug.counters()
        for key in COUNTER_KEYS:
            totals[key] += cnt.get(key, 0)
    except Exception:  # noqa: BLE001
        result["harness"] = traceback.format_exc()
    finally:
        for key, v in checker.categories.items():
            totals["reason_kinds"][key] = totals["reason_kinds"].get(key, 0) + v
        for key, v in checker.unparsed.items():
            totals["unparsed"].setdefault(key, v)
        if not dyn.is_grad_enabled():
            result["harness"] = (result["harness"] or "") + "grad mode left disabled"
            dyn.set_grad_enabled(True)
        if dyn.get_default_dtype() != dyn.float32:
            result["harness"] = (result["harness"] or "") + "default dtype left changed"
            dyn.set_default_dtype(dyn.float32)
        dyn.debug.reset()
    if not (result["diffs"] or result["reasons"] or result["harness"]):
        os.remove(path)  # (a crash leaves the program being run in the temp folder)
    return result


def failure_kind(res):
    """A short name of a failure, to group failures: the first difference, else the first reason problem."""
    if res["diffs"]:
        return "DIFF " + re.sub(r"argument \w+", "argument", res["diffs"][0][1][0])
    if res["harness"]:
        return "HARNESS " + res["harness"].strip().split("\n")[-1][:80]
    p = res["reasons"][0][1]
    return "REASON " + re.sub(r"'[^']*'|`[^`]*`|\[[^\]]*\]|\d+|\([^)]*\)", "…", p)[:120]


def report_failure(prog, res, show_source=True):
    out = []
    if show_source:
        out.append("---- program ----\n" + prog.source())
    if res["harness"]:
        out.append("---- harness error ----\n" + res["harness"])
    if res["diffs"]:
        k = res["diffs"][0][0]
        out.append(f"---- first difference: call {k} ({describe_change(prog.calls, k)}) ----")
        out.append(f"  state: {prog.calls[k]}")
        for what, e, c in [x for _, x in res["diffs"]][:6]:
            out.append(f"  {what}\n      eager:    {short(e)}\n      compiled: {short(c)}")
    if res["reasons"]:
        out.append("---- recompile reasons ----")
        for k, p, ev in res["reasons"][:6]:
            out.append(f"  call {k} ({describe_change(prog.calls, k)}): {p}")
            if ev is not None:
                out.append(f"      event: {short(ev.get('reason'))} | cause {ev.get('cause')}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="index of the first program")
    ap.add_argument("--one", type=int, default=None, help="print program K's source and run only it")
    ap.add_argument("--show", action="store_true", help="print every program's source")
    ap.add_argument("--write", metavar="FILE", help="with --one: also write the program to FILE")
    ap.add_argument("--stats", action="store_true", help="print the most common exceptions of the eager calls")
    ap.add_argument("--reports", type=int, default=2,
                    help="print the source and differences of the first N failures of each kind (the rest: one line)")
    ap.add_argument("--time-limit", type=float, default=0, help="stop starting new sequences after this many seconds")
    ap.add_argument("--quiet-reasons", action="store_true", help="do not count reason problems as failures")
    ap.add_argument("--dtypes", choices=["all", "classic"], default="all",
                    help="classic: float32, float64 and int64 only, as the pinned programs were generated")
    opts = ap.parse_args()
    if opts.dtypes == "all":
        DTYPES.extend(MORE_DTYPES)

    indices = [opts.one] if opts.one is not None else list(range(opts.start, opts.start + opts.programs))
    totals = {key: 0 for key in COUNTER_KEYS}
    totals.update(seq_calls=0, eager_raised=0, exc_msgs={}, reason_probs={}, hit_calls=0, recompile_calls=0, fallback_calls=0, exc_types={}, reason_kinds={},
                  unparsed={}, recompile_after={})
    tmpdir = tempfile.mkdtemp(prefix="stale_graph_")
    failed, harness_errors, reason_fails, diff_fails, kinds = [], [], [], [], {}
    t0 = time.time()
    try:
        for k in indices:
            prog = generate(opts.seed, k)
            if opts.show or opts.one is not None:
                print(f"---- program {k} ----\n{prog.source()}")
                if opts.write:
                    with open(opts.write, "w") as fh:
                        fh.write(prog.source())
            res = check_program(prog, tmpdir, totals)
            bad = bool(res["diffs"] or res["harness"] or (res["reasons"] and not opts.quiet_reasons))
            if bad:
                failed.append(k)
                kind = failure_kind(res)
                kinds.setdefault(kind, []).append(k)
                print(f"FAIL program {k} (seed {opts.seed}): {kind}", flush=True)
                full = opts.one is not None or opts.show or len(kinds[kind]) <= opts.reports
                if full:
                    print(report_failure(prog, res, show_source=not (opts.show or opts.one is not None)) + "\n",
                          flush=True)
                if res["diffs"]:
                    diff_fails.append(k)
                if res["harness"]:
                    harness_errors.append(k)
                if res["reasons"]:
                    reason_fails.append(k)
            elif opts.one is not None:
                print(f"PASS program {k}")
            if opts.time_limit and time.time() - t0 > opts.time_limit:
                indices = indices[: indices.index(k) + 1]
                print(f"time limit reached after {len(indices)} sequences")
                break
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    dt = time.time() - t0
    print(f"time {dt:.1f}s for {len(indices)} sequences")
    print(f"calls {totals['seq_calls']} (each eager and compiled); eager raised in {totals['eager_raised']} "
          f"({', '.join(f'{n} {t}' for t, n in sorted(totals['exc_types'].items(), key=lambda x: -x[1]))})")
    if opts.stats:
        print("most common eager exceptions:")
        for msg, n in sorted(totals["exc_msgs"].items(), key=lambda x: -x[1])[:25]:
            print(f"  {n:5d}  {msg}")
    print("counters (compiled calls): " + ", ".join(f"{key} {totals[key]}" for key in COUNTER_KEYS))
    print(f"compiled calls served only by cache hits {totals['hit_calls']}, with a recompile {totals['recompile_calls']},"
          f" with a fallback {totals['fallback_calls']}")
    print("recompiles after a change of: " + ", ".join(f"{k} {v}" for k, v in sorted(totals["recompile_after"].items(),
                                                                                  key=lambda x: -x[1])))
    print("recompile reasons checked: " + ", ".join(f"{k} {v}" for k, v in sorted(totals["reason_kinds"].items(),
                                                                                key=lambda x: -x[1])))
    if totals["unparsed"]:
        print("cause keys not checked (generic or unnamed):\n" + "\n".join(f"  {k!r}  e.g. {v[0]!r} (program {v[1]})"
                                                                 for k, v in totals["unparsed"].items()))
    if totals["reason_probs"]:
        print("recompile-reason problems (kind: count, programs):")
        for kind, ks in sorted(totals["reason_probs"].items(), key=lambda x: -len(x[1])):
            print(f"  {len(ks):5d}  {kind}  (programs {sorted(set(ks))[:8]})")
    if failed:
        print("failure kinds (count, programs):")
        for kind, ks in sorted(kinds.items(), key=lambda x: -len(x[1])):
            print(f"  {len(ks):5d}  {kind}  {ks[:10]}{' ...' if len(ks) > 10 else ''}")
        print(f"programs where compiled differs from eager: {len(diff_fails)} {diff_fails[:30]}")
        print(f"programs with harness errors: {len(harness_errors)} {harness_errors[:30]}")
        print(f"programs with recompile-reason problems: {len(reason_fails)} {reason_fails[:30]}")
    print(f"{len(indices) - len(failed)} sequences passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
