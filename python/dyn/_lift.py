"""Tier 2 of the cache (trace once): serving a cache entry without running the function's body.

While tier 1 records (or replays) a call, a concolic pass watches the body's CPython 3.11
bytecode run natively, one instruction at a time (a trace function with opcode events, reading
each instruction's operands from the frame's value stack), and keeps, for every value, where it
came from: an argument, a global, an attribute or item of one (a *source*, re-evaluable at the
next call), a constant, or a value made inside the call. It yields:

- the Python guards: every sourced value that decided a branch, a loop's length, a called
  object or a non-tensor operand of an op, as a predicate over its source;
- where each graph input is fetched from, and how the return value is rebuilt;
- or the reason the entry stays on tier 1 (an effect on outside Python state, an unknown C call,
  a graph break, ...), with the line that does it.

Execution stays native: effects happen once, values are Python's own, and a refusal costs
nothing but the tracing. A lifted call checks the guards in one generated function, fetches the
inputs and runs the entry's plan in the engine (which checks the tensor guards), then rebuilds
the result. A guard that fails sends the call to tier 1, which explains and recompiles as before.
"""
import builtins
import dis
import math
import operator
import os
import sys
import types
import weakref

import _dyn

_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep
_STDLIB = os.path.dirname(os.__file__) + os.sep
# An import the call triggers runs the import system's finders (setuptools installs one): not the body.
_IMPORT_HOOKS = {"find_spec", "find_module", "find_distributions", "create_module", "exec_module", "invalidate_caches"}
_MISS = object()
_NULL = object()

# ---- provenance ----


class Prov:
    __slots__ = ()


class _Const(Prov):
    """Fixed by the code, the constants, the trusted library, or the tensor guards (shapes)."""
    __slots__ = ()

    def __repr__(self):
        return "CONST"


CONST = _Const()


class Src(Prov):
    """A value re-evaluable at the next call from the call's arguments and the objects it read."""
    __slots__ = ("e",)

    def __init__(self, e):
        self.e = e


class Opaque(Prov):
    """Where the value came from is not known: it may not decide anything."""
    __slots__ = ("why",)

    def __init__(self, why):
        self.why = why


class Seq(Prov):
    """A tuple or list made in the call: the provenance of each item (lists: kept by object id)."""
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = list(items)


class Map(Prov):
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = dict(items)


class Iter(Prov):
    """An iterator: the provenance of each item it will give, and the guard its end needs."""
    __slots__ = ("items", "i", "end_src", "n")

    def __init__(self, items, end_src=None):
        self.items, self.i, self.end_src = items, 0, end_src

    def next(self):
        p = self.items(self.i) if callable(self.items) else (
            self.items[self.i] if self.i < len(self.items) else Opaque("an iterator gave more items than modeled"))
        self.i += 1
        return p


class Gen(Prov):
    """A generator expression made in the call: the provenance of what it yielded so far."""
    __slots__ = ("provs", "func", "yields", "values", "why")

    def __init__(self, provs, func):
        self.provs, self.func, self.yields, self.values = provs, func, [], []
        self.why = "a generator expression (only consumed at once by tuple(), all(), unpacking or a loop)"


class Method(Prov):
    """LOAD_METHOD's function slot: type(obj).name, called with obj."""
    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        self.obj, self.name = obj, name


class Super(Prov):
    """super() in a method: what it finds is fixed by the class of self; bound to self."""
    __slots__ = ("self_p",)

    def __init__(self, self_p):
        self.self_p = self_p


class Bound(Prov):
    """A method found through super(), bound to the self of the calling method."""
    __slots__ = ("func", "self_p")

    def __init__(self, func, self_p):
        self.func, self.self_p = func, self_p


class Decided(Prov):
    """A callee whose guards are already recorded (PRECALL unpacked its bound method)."""
    __slots__ = ()


class Refused(Exception):
    def __init__(self, reason, where=""):
        super().__init__(reason)
        self.reason, self.where = reason, where


_PRIMS = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis))


def _is_prim(v):
    if type(v) in _PRIMS:
        return True
    if type(v) in (tuple, frozenset) or (isinstance(v, tuple) and type(v).__module__.startswith("dyn")):
        return all(_is_prim(x) for x in v)
    return False


def _trusted_value(v):
    """Library objects taken as fixed: modules, functions, classes, builtins, dtypes."""
    if isinstance(v, (types.ModuleType, type, types.BuiltinFunctionType, types.BuiltinMethodType,
                      types.MethodDescriptorType, types.WrapperDescriptorType, types.MethodWrapperType,
                      _dyn._OutFunction)):
        return True
    if isinstance(v, types.FunctionType):
        return v.__code__.co_filename.startswith(_PKG)
    return type(v).__name__ in ("dtype", "device", "layout", "memory_format") and type(v).__module__ in ("dyn", "_dyn")


def _is_module(obj):
    from .nn.modules.module import Module
    return isinstance(obj, Module)


def _library(code):
    return code.co_filename.startswith(_PKG)


# C functions that read their arguments only. Tensor ops (functions of _dyn and methods of
# tensors) are recorded into the graph: their non-tensor operands are guarded.
_PURE_BUILTINS = {builtins.len, builtins.isinstance, builtins.issubclass, builtins.type, builtins.getattr,
                  builtins.hasattr, builtins.int, builtins.float, builtins.bool, builtins.str, builtins.tuple,
                  builtins.list, builtins.dict, builtins.set, builtins.frozenset, builtins.range, builtins.enumerate,
                  builtins.zip, builtins.reversed, builtins.sorted, builtins.min, builtins.max, builtins.abs,
                  builtins.sum, builtins.round, builtins.divmod, builtins.pow, builtins.hash, builtins.callable,
                  builtins.iter, builtins.next, builtins.slice, builtins.super, builtins.any, builtins.all,
                  builtins.repr, builtins.format, builtins.ord, builtins.chr, builtins.object}
_PURE_MODULES = ("math", "operator", "_operator", "itertools", "functools")
_MUTATING = {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort", "update", "setdefault",
             "popitem", "add", "discard", "__setitem__", "__delitem__", "__iadd__"}
_TENSOR_IMPURE = {"item", "tolist", "numpy", "backward", "register_hook", "retain_grad", "requires_grad_", "set_",
                  "share_memory_", "data_ptr", "untyped_storage", "storage", "register_post_accumulate_grad_hook", "storage_offset",
                  "__setstate__", "record_stream", "pin_memory"}
# _dyn's functions that are ops (recorded into the graph; their non-tensor operands guarded). Every
# other function of _dyn reads or changes state the graph does not hold (grad mode, the seed, the
# capture itself) and keeps the body running.
_DYN_OPS_PRIVATE = {"_cumsum", "_index_add", "_layer_norm", "_scatter", "_sort", "_as_subclass", "_check_device",
                    "_matmul"}
# (Grad mode and the default dtype may be read: the engine guards both.)
_DYN_STATE = {"initial_seed", "manual_seed", "set_default_dtype", "set_num_threads", "sync", "get_num_threads",
              "set_printoptions", "seed", "blas_info"}
_TENSOR_SOURCE_ATTRS = {"grad", "data", "_base", "grad_fn", "is_leaf", "_version"}


def _tensor_type():
    return _dyn.Tensor


# ---- expressions (sources) and the code that re-evaluates them ----


class Expr:
    __slots__ = ("op", "args", "_h")

    def __init__(self, op, *args):
        self.op, self.args = op, args
        self._h = hash((op,) + tuple(id(a) if not isinstance(a, (Expr, str, int)) else a for a in args))

    def __hash__(self):
        return self._h

    def __eq__(self, o):
        return isinstance(o, Expr) and self.op == o.op and len(self.args) == len(o.args) and all(
            (a is b) or (type(a) is type(b) and isinstance(a, (Expr, str, int)) and a == b)
            for a, b in zip(self.args, o.args))


class Codegen:
    """Python code for expressions, each evaluated once into a temporary, in first-use order.

    Constants are held weakly where Python allows: a lift is kept while its compiled function
    lives, and what its guards compare with (the function, its module, a submodule) often leads
    back to the compiled function. A constant that died fails its guard (the call goes to tier 1)."""

    def __init__(self):
        self.consts, self.lines, self.temps = [], [], {}
        self._const_ids = {}

    def k(self, obj):
        key = id(obj)
        if key not in self._const_ids:
            i = len(self.consts)
            try:
                if getattr(obj, "__module__", None) == "builtins" or type(obj).__module__ == "builtins" and \
                        not isinstance(obj, (types.FunctionType, type)):
                    raise TypeError  # int, len, operator.mul: nothing of the program's; no dereference
                self.consts.append(weakref.ref(obj))
                name = f"k{i}"
                self.lines.append(f"{name} = K[{i}]()")
                self.lines.append(f"if {name} is None: return MISS")
            except TypeError:  # builtins, tuples, ...: nothing of the program's
                self.consts.append(obj)
                name = f"K[{i}]"
            self._const_ids[key] = name
        return self._const_ids[key]

    def lit(self, v):
        if type(v) in (int, bool, str, type(None)) or (type(v) is float and math.isfinite(v)):
            return repr(v)
        return self.k(v)

    def expr(self, e):
        if e in self.temps:
            return self.temps[e]
        op, a = e.op, e.args
        if op == "root":
            code = "M"
        elif op == "arg":
            code = f"A[{a[0]}]"
        elif op == "kw":
            code = f"KW[{a[0]!r}]"
        elif op == "k":
            code = self.k(a[0])
        elif op == "attr":
            code = f"{self.expr(a[0])}.{a[1]}"
        elif op == "item":
            code = f"{self.expr(a[0])}[{self.lit(a[1])}]"
        elif op == "call":  # a pure builtin of sources
            code = f"{self.k(a[0])}({', '.join(self.expr(x) for x in a[1:])})"
        elif op == "binop":
            code = f"{self.k(a[0])}({self.expr(a[1])}, {self.expr(a[2])})"
        elif op == "unary":
            code = f"{self.k(a[0])}({self.expr(a[1])})"
        elif op == "lit":
            code = self.lit(a[0])
        elif op == "mcall":
            code = f"{self.expr(a[0])}.{a[1]}({', '.join(self.expr(x) for x in a[2:])})"
        else:
            raise AssertionError(op)
        if op in ("arg", "kw", "lit", "k", "root"):
            return code
        t = f"t{len(self.temps)}"
        self.lines.append(f"{t} = {code}")
        self.temps[e] = t
        return t


_SYMBOLS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.floordiv: "//",
            operator.mod: "%", operator.pow: "**", operator.lt: "<", operator.le: "<=", operator.eq: "==",
            operator.ne: "!=", operator.gt: ">", operator.ge: ">=", operator.is_: "is", operator.is_not: "is not",
            operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.contains: "contains"}


def _text(e, names):
    """An expression as the user would write it: `x`, `self.fc1.weight`, `len(self.layers)`."""
    op, a = e.op, e.args
    if op == "root":
        return names.get("root", "fn")
    if op == "arg":
        return names.get(("arg", a[0]), f"args[{a[0]}]")
    if op == "kw":
        return a[0]
    if op == "k":
        return getattr(a[0], "__qualname__", None) or type(a[0]).__name__
    if op == "attr":
        b = a[0]
        if a[1] == "__globals__" and b.op == "k":
            return "globals()"
        if a[1] == "cell_contents" and b.op == "item" and b.args[0].op == "attr" and b.args[0].args[1] == "__closure__":
            f = b.args[0].args[0].args[0]
            return f.__code__.co_freevars[b.args[1]]
        return f"{_text(a[0], names)}.{a[1]}"
    if op == "item":
        if a[0].op == "attr" and a[0].args[1] == "__globals__" and type(a[1]) is str:
            return a[1]
        if a[0].op == "attr" and a[0].args[1] in ("__defaults__", "__kwdefaults__") and a[0].args[0].op == "k":
            f = a[0].args[0].args[0]
            if a[0].args[1] == "__kwdefaults__":
                return f"{a[1]} (the default)"
            code = f.__code__
            return f"{code.co_varnames[code.co_argcount - len(f.__defaults__ or ()) + a[1]]} (the default)"
        return f"{_text(a[0], names)}[{a[1]!r}]"
    if op == "call":
        fn = getattr(a[0], "__name__", "?")
        return f"{fn}({', '.join(_text(x, names) for x in a[1:])})"
    if op == "binop":
        sym = _SYMBOLS.get(a[0])
        if sym:
            return f"({_text(a[1], names)} {sym} {_text(a[2], names)})"
        return f"{getattr(a[0], '__name__', '?')}({_text(a[1], names)}, {_text(a[2], names)})"
    if op == "unary":
        return f"{getattr(a[0], '__name__', '?')}({_text(a[1], names)})"
    if op == "lit":
        return repr(a[0])
    if op == "mcall":
        return f"{_text(a[0], names)}.{a[1]}({', '.join(_text(x, names) for x in a[2:])})"
    return "?"


class Guard:
    __slots__ = ("kind", "e", "value", "where", "other")

    def __init__(self, kind, e, value, where, other=None):
        self.kind, self.e, self.value, self.where, self.other = kind, e, value, where, other

    def text(self, names):
        s = _text(self.e, names)
        v = self.value
        if self.kind == "eq":
            return f"{s} == {v!r}"
        if self.kind == "type_eq":
            return f"{s} == {v!r}"
        if self.kind == "id":
            what = getattr(v, "__qualname__", None) or f"the {type(v).__name__} seen when traced"
            return f"{s} is {what}"
        if self.kind == "bool":
            return f"bool({s}) is {v}"
        if self.kind == "none":
            return f"{s} is {'' if v else 'not '}None"
        if self.kind == "same":
            return f"{s} is {_text(self.other, names)}"
        if self.kind == "absent":
            return f"{v!r} is not a global (the builtin is used)"
        return "?"


# ---- the concolic pass ----


class _Frame:
    __slots__ = ("frame", "code", "instrs", "stack", "locals", "cells", "pending", "kwnames", "library", "func", "gen")

    def __init__(self, frame, provs, func):
        self.frame = frame
        self.func = func  # the function running: its globals, closure and defaults are read through it
        self.gen = None  # the Gen when this is a generator expression's frame
        self.code = frame.f_code
        self.instrs = _instructions(self.code)
        self.stack = []
        self.locals = provs  # name -> Prov
        self.cells = {}
        self.pending = None
        self.kwnames = ()
        self.library = _library(self.code)
        # MAKE_CELL runs before the first traced instruction (RESUME): an argument that is also a
        # cell keeps its provenance in the cell.
        for name in self.code.co_cellvars:
            if name in provs:
                self.cells[name] = provs[name]


_YIELD = dis.opmap["YIELD_VALUE"]
_instr_cache = weakref.WeakKeyDictionary()  # a code object's instructions by offset; never keeps it alive


def _instructions(code):
    d = _instr_cache.get(code)
    if d is None:
        d = {i.offset: i for i in dis.get_instructions(code)}
        _instr_cache[code] = d
    return d


def _bind(fn, arg_provs, arg_vals, kw_provs):
    """The callee's parameters' provenance, bound as CPython binds them (defaults are sources)."""
    code = fn.__code__
    names = code.co_varnames
    npos, nkw, nposonly = code.co_argcount, code.co_kwonlyargcount, code.co_posonlyargcount
    out = {}
    i = npos + nkw
    varargs = names[i] if code.co_flags & 0x04 else None
    if varargs:
        i += 1
    varkw = names[i] if code.co_flags & 0x08 else None
    extra = []
    for j, p in enumerate(arg_provs):
        if j < npos:
            out[names[j]] = p
        else:
            extra.append(p)
    if extra and not varargs:
        raise Refused("a call passes more arguments than the function takes")
    extra_kw = {}
    for k, p in kw_provs.items():
        if k in names[nposonly:npos + nkw] and k not in out:
            out[k] = p
        else:
            extra_kw[k] = p
    if extra_kw and not varkw:
        raise Refused("a call passes a keyword the function does not take")
    defaults = fn.__defaults__ or ()
    for j in range(npos):
        if names[j] not in out:
            d = j - (npos - len(defaults))
            if d < 0:
                raise Refused("a call misses an argument")
            dv = defaults[d]
            out[names[j]] = CONST if _library(code) and (_is_prim(dv) or _trusted_value(dv)) else Src(
                Expr("item", Expr("attr", Expr("k", fn), "__defaults__"), d))
    for k in names[npos:npos + nkw]:
        if k not in out:
            kv = (fn.__kwdefaults__ or {}).get(k)
            out[k] = CONST if _library(code) and (_is_prim(kv) or _trusted_value(kv)) else Src(
                Expr("item", Expr("attr", Expr("k", fn), "__kwdefaults__"), k))
    if varargs:
        out[varargs] = Seq(extra)
    if varkw:
        out[varkw] = Map(extra_kw)
    return out


def _cell_expr(f, i):
    # through the function, not the cell: a lift holds its constants weakly, and cells cannot be
    return Expr("attr", Expr("item", Expr("attr", Expr("k", f), "__closure__"), i), "cell_contents")


def _globals_expr(f):
    return Expr("attr", Expr("k", f), "__globals__")


def _closure_provs(f):
    """The free variables of f: each a source through its cell (the library's fixed ones constant)."""
    out = {}
    for i, (name, cell) in enumerate(zip(f.__code__.co_freevars, f.__closure__ or ())):
        try:
            v = cell.cell_contents
        except ValueError:  # an empty cell
            out[("free", name)] = Src(_cell_expr(f, i))
            continue
        out[("free", name)] = CONST if _library(f.__code__) and _trusted_value(v) else Src(_cell_expr(f, i))
    return out


def _resolve(callee):
    """(Python function, self or _NULL) that calling callee runs first, or (None, None)."""
    if isinstance(callee, types.FunctionType):
        return callee, _NULL
    if isinstance(callee, types.MethodType) and isinstance(callee.__func__, types.FunctionType):
        return callee.__func__, callee.__self__
    call = getattr(type(callee), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(callee, type):
        return call, callee
    return None, None


class Tracer:
    """One concolic pass over one tier-1 call."""

    def __init__(self):
        self.frames = {}  # id(frame) -> _Frame
        self.expect = None  # (code, provs) of the Python call about to start
        self.guards = []
        self.guard_keys = set()
        self.tensor_srcs = {}  # id(tensor) -> (tensor, Expr); kept alive only during the pass
        self.lists = {}  # id(list or dict made in the call) -> (obj, Seq/Map)
        self.cells = {}  # id(cell made in the call) -> (cell, Prov)
        self.refused = None
        self.ret = None  # (value, prov) of the root frame's return
        self.root_id = None
        self.last_return = None
        self.where = ""
        self.instructions = 0
        self.made_functions = {}  # id(function made in the call) -> (function, its cells' provenance)
        self.where_of = {}  # tensor source -> the line that read it
        self.floats = []  # (node, source, value when traced, line): floats read at each call
        self.new_objs = {}  # id -> the library objects the call made (kept alive while it runs)
        self.gens = {}  # id(generator made in the call) -> (generator, its Gen)
        self.meta_lines = []  # guards on tensors read for their metadata only, as text
        self.names = {}
        self.scoped = set()  # ids of the library's context managers entered (scoped global state)
        self.last_return = None
        # (id(obj), attribute) -> (obj, provenance of what the call stored): a later read in the
        # call gets what was stored, not the source (which holds it only after the call).
        self.written = {}
        self.grad_leaves = {}  # id(tensor) -> (tensor, Expr): tensors whose .grad the call sets
        self.effects = []  # after add_effects(): (Expr of a tensor, index of its new .grad in outs or None)
        self.backward_at = None  # the line of the first backward() the call ran

    # -- entry points --

    def start(self, fn, args, kwargs):
        """Starts watching; the caller then calls fn(*args, **kwargs) itself (no frame of ours lies
        between the user's code and the body) and calls finish()."""
        if sys.gettrace() is not None:
            self.refused = Refused("a trace function is set (a debugger or coverage tool): the body is not analyzed")
            return
        f, self_obj = _resolve(fn)
        if f is None:
            self.refused = Refused(f"{type(fn).__name__} is not a Python function")
            return
        self.nargs, self.kwnames = len(args), tuple(kwargs)
        arg_provs = [Src(Expr("arg", i)) for i in range(len(args))]
        kw_provs = {k: Src(Expr("kw", k)) for k in kwargs}
        if self_obj is not _NULL:
            arg_provs.insert(0, Src(Expr("root")))
        try:
            provs = _bind(f, arg_provs, None, kw_provs)
        except Refused as r:
            self.refused = r
            return
        provs.update(_closure_provs(f))
        self.expect = (f.__code__, provs, f)
        sys.settrace(self._global)

    def finish(self):
        if sys.gettrace() == self._global:
            sys.settrace(None)
        self._stop()
        if self.refused is None and self.ret is None:
            self.refused = Refused("the body was not observed to return")

    def _stop(self):
        for fr in self.frames.values():
            try:
                fr.frame.f_trace = None
                fr.frame.f_trace_opcodes = False
            except Exception:
                pass
        self.frames.clear()
        self.lists.clear()
        self.cells.clear()
        self.made_functions.clear()
        self.new_objs.clear()
        self.written.clear()
        for _, gen in self.gens.values():
            gen.values.clear()  # the values it yielded (lazy tensors among them)
        self.gens.clear()
        self.cur = None  # a frame object keeps its locals (lazy tensors) alive after it returns
        self.expect = None

    def refuse(self, reason, where=None):
        if self.refused is None:
            self.refused = Refused(reason, where if where is not None else self.where)
        sys.settrace(None)
        self._stop()

    # -- trace callbacks --

    def _global(self, frame, event, arg):
        if event != "call" or self.refused is not None:
            return None
        code = frame.f_code
        if self.expect is not None and self.expect[0] is code:
            provs, func = self.expect[1], self.expect[2]
            self.expect = None
            flags = code.co_flags
            if flags & (0x20 | 0x80 | 0x100 | 0x200):  # generator, coroutine, async
                self.refuse(f"{code.co_name} is a generator or coroutine: its body runs outside the call",
                            f"{code.co_filename}:{frame.f_lineno}")
                return None
            fr = _Frame(frame, provs, func)
            if self.root_id is None:
                self.root_id = id(frame)
            self.frames[id(frame)] = fr
            frame.f_trace_opcodes = True
            return self._local
        if code.co_flags & 0x20 and code.co_name == "<genexpr>":
            fr = self.frames.get(id(frame))
            if fr is not None and fr.frame is frame:  # resumed after a yield
                return self._local
            for g, gen in self.gens.values():
                if g.gi_frame is frame:
                    fr = _Frame(frame, dict(gen.provs), gen.func)
                    fr.gen = gen
                    self.frames[id(frame)] = fr
                    frame.f_trace_opcodes = True
                    return self._local
        # A frame nobody called directly: a dunder run by an instruction, a property, a finalizer.
        back = frame.f_back
        if back is None or id(back) not in self.frames:
            return None  # called by code the pass does not follow (the library's, the stdlib's): pure
        if _library(code) or code.co_filename.startswith(("<frozen", _STDLIB)) or code.co_name in _IMPORT_HOOKS:
            return None  # the library's lookups and scoped context managers are pure
        self.refuse(f"{code.co_name} ({code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}) runs as a "
                    "side effect of an instruction (a property, a dunder method or a finalizer)")
        return None

    def _local(self, frame, event, arg):
        if self.refused is not None:
            return None
        fr = self.frames.get(id(frame))
        if fr is None:
            return None
        try:
            if event == "opcode":
                self.instructions += 1
                self._step(fr, frame)
            elif event == "return" and fr.gen is not None and frame.f_code.co_code[frame.f_lasti] == _YIELD:
                pass  # suspended at a yield: its frame (and what op_YIELD_VALUE left pending) lives on
            elif event == "return" and fr.gen is not None:
                del self.frames[id(frame)]  # the generator is exhausted
            elif event == "return":
                self._finish(fr, frame, returning=True)
                prov = fr.stack[-1] if fr.stack else Opaque("the return value")
                del self.frames[id(frame)]
                if id(frame) == self.root_id:
                    self.ret = (arg, prov)
                else:
                    self.last_return = prov
            elif event == "exception":
                self.refuse(f"an exception ({arg[0].__name__}) is raised in the body",
                            f"{frame.f_code.co_filename}:{frame.f_lineno}")
                return None
        except Refused as r:
            self.refuse(r.reason, r.where or f"{frame.f_code.co_filename}:{frame.f_lineno}")
            return None
        except Exception as e:  # a gap in the model: refuse, never guess
            self.refuse(f"internal: the lift's model of {type(e).__name__}: {e}",
                        f"{frame.f_code.co_filename}:{frame.f_lineno}")
            return None
        return self._local

    # -- provenance helpers --

    def guard(self, kind, e, value, other=None):
        key = (kind, e, id(value) if kind == "id" else (type(value), value) if _is_prim(value) else id(value),
               other)
        if key in self.guard_keys:
            return
        self.guard_keys.add(key)
        self.guards.append(Guard(kind, e, value, self.where, other))

    def use(self, p, v, why):
        """v (with provenance p) decides something: guard its source so the next call sees the same."""
        if p is CONST:
            return
        if isinstance(p, Src):
            if isinstance(v, _tensor_type()):
                self.tensor_src(v, p.e)
            elif _is_prim(v):
                self.guard("type_eq", p.e, v)
            elif type(v) in (list, dict) and _is_prim(tuple(v.items()) if type(v) is dict else tuple(v)):
                self.guard("type_eq", p.e, v.copy())
            else:
                self.guard("id", p.e, v)
            return
        if isinstance(p, Seq):
            vs = list(v) if isinstance(v, (list, tuple)) else None
            if vs is None or len(vs) != len(p.items):
                raise Refused(f"{why}: a container changed while modeled")
            for q, x in zip(p.items, vs):
                self.use(q, x, why)
            return
        if isinstance(p, Map):
            if not isinstance(v, dict):
                raise Refused(f"{why}: a dict changed while modeled")
            for k, q in p.items.items():
                self.use(q, v.get(k), why)
            return
        if isinstance(p, (Iter, Method)):
            return
        raise Refused(f"{why} depends on a value of unknown origin ({p.why})")

    def use_prov(self, p, why):
        """Like use() for a value no longer at hand (a generator's yield): only constants pass."""
        if p is CONST:
            return
        if isinstance(p, (Seq, Map)):
            for q in (p.items.values() if isinstance(p, Map) else p.items):
                self.use_prov(q, why)
            return
        raise Refused(f"{why} came from outside the call (guarding it is not modeled)")

    def tensor_src(self, t, e):
        # Every source a tensor was read from is fetched: the engine checks that the tensors that
        # were one graph input are one again, and that distinct ones share memory as they did.
        key = (id(t), e)
        if key not in self.tensor_srcs:
            self.tensor_srcs[key] = (t, e)
            self.where_of[key] = self.where

    def prov_of_container(self, v, p):
        if isinstance(p, Seq) and type(v) is list:
            entry = self.lists.get(id(v))
            if entry is not None and entry[0] is v:
                return entry[1]
        if isinstance(p, Map) and type(v) is dict:
            entry = self.lists.get(id(v))
            if entry is not None and entry[0] is v:
                return entry[1]
        return p

    def new_list(self, v, p):
        self.lists[id(v)] = (v, p)
        return p

    def attr(self, p, obj, name, val):
        w = self.written.get((id(obj), name))
        if w is not None and w[0] is obj:
            return w[1]
        if id(obj) in self.new_objs and self.new_objs[id(obj)] is obj:
            return CONST  # an object the call made: fixed by what made it
        if isinstance(p, Super):
            if isinstance(val, types.MethodType):
                return Bound(val.__func__, p.self_p)
            return CONST if _is_prim(val) or _trusted_value(val) else Opaque(f"super().{name}")
        if isinstance(obj, _tensor_type()):
            if isinstance(p, Src):
                if name in _TENSOR_SOURCE_ATTRS or not isinstance(val, _tensor_type()) and not callable(val):
                    return Src(Expr("attr", p.e, name))  # .grad, .data; metadata (shape, dtype, ...)
                if isinstance(val, _tensor_type()):  # .T, .mT, .real: an op on the tensor
                    self.tensor_src(obj, p.e)
            return CONST
        if isinstance(p, Src):
            # A module's parameter, buffer or submodule, found by Module.__getattr__ (Python, slow):
            # read from its dict directly, which is what that lookup does.
            d = getattr(obj, "__dict__", None)
            if d is not None and name not in d and _is_module(obj) and not hasattr(type(obj), name):
                for kind in ("_parameters", "_buffers", "_modules"):
                    reg = d.get(kind)
                    if reg is not None and name in reg and reg[name] is val:
                        return Src(Expr("item", Expr("attr", p.e, kind), name))
            return Src(Expr("attr", p.e, name))
        if p is CONST:
            if _trusted_value(val):
                return CONST
            if isinstance(obj, types.ModuleType) or _trusted_value(obj):
                return Src(Expr("attr", Expr("k", obj), name))
            return CONST if _is_prim(val) else Src(Expr("attr", Expr("k", obj), name))
        return Opaque(f"attribute {name} of a value of unknown origin") if isinstance(p, Opaque) else CONST

    def item(self, p, obj, key, kp, val):
        if isinstance(obj, _tensor_type()):
            self.use(kp, key, "an index of a tensor")
            return CONST
        p = self.prov_of_container(obj, p)
        if isinstance(p, Seq) and type(key) is slice and all(
                x is None or type(x) is int for x in (key.start, key.stop, key.step)):
            self.use(kp, key, "a slice")
            return Seq(p.items[key])
        if isinstance(p, Seq) and type(key) is int:
            self.use(kp, key, "an index")
            try:
                return p.items[key]
            except IndexError:
                return Opaque("an item of a list made in the call")
        if isinstance(p, Map):
            self.use(kp, key, "a key")
            return p.items.get(key, Opaque("an item of a dict made in the call"))
        if isinstance(p, Src) and _is_prim(key):
            self.use(kp, key, "a key")
            return Src(Expr("item", p.e, key))
        if p is CONST and _is_prim(key):
            self.use(kp, key, "a key")
            return CONST if _is_prim(val) or _trusted_value(val) else Src(Expr("item", Expr("k", obj), key))
        if type(key) is slice:
            for x in (key.start, key.stop, key.step):
                if x is not None and not _is_prim(x):
                    return Opaque("a slice by a value of unknown kind")
        self.use(kp, key, "a key")
        if p is CONST and (_is_prim(val) or _trusted_value(val)):
            return CONST  # a slice of a constant (x.shape[-n:]) is one
        if isinstance(p, Src) and type(key) is slice and _is_prim(val):
            return Src(Expr("item", p.e, key))
        return Opaque("an item of a value of unknown origin") if not isinstance(p, Opaque) else p

    # -- instructions --

    def _finish(self, fr, frame, returning=False):
        """Completes the provenance of the previous instruction of fr, now that it ran."""
        pend = fr.pending
        if pend is None:
            return
        fr.pending = None
        pops, result = pend
        if pops:
            del fr.stack[len(fr.stack) - pops:]
        if returning:
            return
        real = _dyn._frame_stack(frame)
        pushed = len(real) - len(fr.stack)
        if callable(result):
            outs = result(real, pushed)
        else:
            outs = result
        if len(outs) != pushed:
            raise Refused(f"internal: stack model mismatch ({len(outs)} values modeled, {pushed} pushed)")
        fr.stack.extend(outs)

    def _step(self, fr, frame):
        self._finish(fr, frame)
        self.cur = fr
        ins = fr.instrs.get(frame.f_lasti)
        if ins is None:
            raise Refused("internal: no instruction at this offset")
        self.where = f"{fr.code.co_filename}:{frame.f_lineno}"
        stk = _dyn._frame_stack(frame)
        if len(stk) != len(fr.stack):
            raise Refused(f"internal: stack depth {len(stk)} where {len(fr.stack)} was modeled before {ins.opname}")
        h = getattr(self, "op_" + ins.opname, None)
        if h is None:
            raise Refused(f"the instruction {ins.opname} is not analyzed yet")
        fr.pending = h(fr, ins, stk, frame)

    # Each handler returns (values popped, provenance of the values pushed: a list, or a function
    # of the stack after the instruction and how many it pushed), or None for no stack change.

    def op_NOP(self, fr, ins, stk, frame):
        return None

    op_RESUME = op_NOP
    def op_EXTENDED_ARG(self, fr, ins, stk, frame):
        # CPython 3.11 runs the instruction it extends without another trace event; dis folds
        # the argument into that instruction, which is modeled here.
        off = ins.offset + 2
        while fr.instrs[off].opname == "EXTENDED_ARG":
            off += 2
        nxt = fr.instrs[off]
        h = getattr(self, "op_" + nxt.opname, None)
        if h is None:
            raise Refused(f"the instruction {nxt.opname} is not analyzed yet")
        return h(fr, nxt, stk, frame)

    def op_PRECALL(self, fr, ins, stk, frame):
        # CPython 3.11's PRECALL unpacks a bound method in the callable slot into (function, self).
        n = ins.arg
        bm, p = stk[-(n + 1)], fr.stack[-(n + 1)]
        if stk[-(n + 2)] is None and type(bm) is types.MethodType:
            fr.stack[-(n + 2)] = Decided()
            fr.stack[-(n + 1)] = self._method_self(bm, p)
        return None

    def _method_self(self, bm, p):
        """Guards the bound method bm (provenance p) called, and gives the provenance of its self."""
        if isinstance(p, Bound):
            return p.self_p
        if isinstance(p, Src):
            self.guard("id", Expr("attr", p.e, "__func__"), bm.__func__)
            if p.e.op == "attr" and getattr(type(bm.__self__), p.e.args[1], None) is bm.__func__:
                # obj.method: bound to obj itself, which the method then reads as self
                self.guard("same", Expr("attr", p.e, "__self__"), None, p.e.args[0])
                return Src(p.e.args[0])
            self.guard("id", Expr("attr", p.e, "__self__"), bm.__self__)
            return Src(Expr("attr", p.e, "__self__"))
        if p is CONST:
            return CONST
        raise Refused(f"calls a method of unknown origin ({getattr(p, 'why', p)})")

    def op_CACHE(self, fr, ins, stk, frame):
        return None

    def op_MAKE_CELL(self, fr, ins, stk, frame):
        name = ins.argval
        fr.cells[name] = fr.locals.get(name, CONST)  # an argument that is also a cell keeps its source
        return None

    def op_COPY_FREE_VARS(self, fr, ins, stk, frame):
        return None

    def op_KW_NAMES(self, fr, ins, stk, frame):
        fr.kwnames = fr.code.co_consts[ins.arg]
        return None

    def op_PUSH_NULL(self, fr, ins, stk, frame):
        return 0, [CONST]

    def op_POP_TOP(self, fr, ins, stk, frame):
        return 1, []

    def op_COPY(self, fr, ins, stk, frame):
        return 0, [fr.stack[-ins.arg]]

    def op_SWAP(self, fr, ins, stk, frame):
        s = fr.stack
        s[-1], s[-ins.arg] = s[-ins.arg], s[-1]
        return None

    def op_LOAD_CONST(self, fr, ins, stk, frame):
        return 0, [CONST]

    def op_LOAD_FAST(self, fr, ins, stk, frame):
        return 0, [fr.locals.get(ins.argval, Opaque(f"local {ins.argval}"))]

    def op_STORE_FAST(self, fr, ins, stk, frame):
        fr.locals[ins.argval] = fr.stack[-1]
        return 1, []

    def op_DELETE_FAST(self, fr, ins, stk, frame):
        fr.locals.pop(ins.argval, None)
        return None

    def op_LOAD_DEREF(self, fr, ins, stk, frame):
        name = ins.argval
        if name in fr.cells:
            return 0, [fr.cells[name]]
        freevars = fr.locals.get(("free", name))
        if freevars is not None:
            return 0, [freevars]
        return 0, [Opaque(f"closure variable {name}")]

    def op_STORE_DEREF(self, fr, ins, stk, frame):
        name = ins.argval
        if name in fr.code.co_cellvars:
            fr.cells[name] = fr.stack[-1]
            return 1, []
        raise Refused(f"stores to `{name}`, a variable of an enclosing function (a closure cell)")

    def op_LOAD_GLOBAL(self, fr, ins, stk, frame):
        name = ins.argval
        g = frame.f_globals
        if name in g:
            v = g[name]
            if fr.library and (_trusted_value(v) or isinstance(v, types.FunctionType)):
                p = CONST
            elif _trusted_value(v) and isinstance(v, types.ModuleType):
                self.guard("id", Expr("item", _globals_expr(fr.func), name), v)
                p = CONST
            else:
                p = Src(Expr("item", _globals_expr(fr.func), name))
        else:
            if not fr.library:
                self.guard("absent", _globals_expr(fr.func), name)
            p = CONST
        return 0, ([CONST, p] if ins.arg & 1 else [p])

    def op_LOAD_ATTR(self, fr, ins, stk, frame):
        obj, p = stk[-1], fr.stack[-1]
        name = ins.argval

        def result(real, pushed):
            return [self.attr(p, obj, name, real[-1])]
        return 1, result

    def op_LOAD_METHOD(self, fr, ins, stk, frame):
        obj, p = stk[-1], fr.stack[-1]
        name = ins.argval

        def result(real, pushed):
            # [NULL, attr] when the attribute is not a plain method; [function, obj] when it is.
            if real[-2] is None:
                return [CONST, self.attr(p, obj, name, real[-1])]
            return [Method(p, name), p]
        return 1, result

    def op_STORE_ATTR(self, fr, ins, stk, frame):
        obj, p, val, vp = stk[-1], fr.stack[-1], stk[-2], fr.stack[-2]
        name = ins.argval
        T = _tensor_type()
        if name == "grad" and isinstance(obj, T) and isinstance(p, Src) and (
                val is None or (isinstance(val, T) and vp is CONST)):
            # The .grad a tensor holds after the call is set again after a lifted call's graph ran
            # (zero_grad's `p.grad = None`, backward()'s gradients).
            self.written[(id(obj), name)] = (obj, CONST)
            self.grad_leaves.setdefault(id(obj), (obj, p.e))
            return 2, []
        raise Refused(f"stores `.{name}` into an object (Python state outside the graph)")

    def op_DELETE_ATTR(self, fr, ins, stk, frame):
        raise Refused(f"deletes `.{ins.argval}` of an object (Python state outside the graph)")

    def op_STORE_GLOBAL(self, fr, ins, stk, frame):
        raise Refused(f"assigns the global `{ins.argval}`")

    op_DELETE_GLOBAL = op_STORE_GLOBAL

    def op_BUILD_TUPLE(self, fr, ins, stk, frame):
        n = ins.arg
        items = fr.stack[len(fr.stack) - n:] if n else []
        return n, [Seq(items)]

    def op_BUILD_LIST(self, fr, ins, stk, frame):
        n = ins.arg
        items = fr.stack[len(fr.stack) - n:] if n else []

        def result(real, pushed):
            return [self.new_list(real[-1], Seq(items))]
        return n, result

    def op_BUILD_SET(self, fr, ins, stk, frame):
        n = ins.arg
        for p, v in zip(fr.stack[len(fr.stack) - n:], stk[len(stk) - n:]):
            self.use(p, v, "an item of a set")
        return n, [CONST]

    def op_BUILD_MAP(self, fr, ins, stk, frame):
        n = ins.arg
        ps = fr.stack[len(fr.stack) - 2 * n:]
        vs = stk[len(stk) - 2 * n:]
        items = {}
        for j in range(n):
            self.use(ps[2 * j], vs[2 * j], "a dict key")
            items[vs[2 * j]] = ps[2 * j + 1]

        def result(real, pushed):
            return [self.new_list(real[-1], Map(items))]
        return 2 * n, result

    def op_BUILD_CONST_KEY_MAP(self, fr, ins, stk, frame):
        n = ins.arg
        keys = stk[-1]
        ps = fr.stack[len(fr.stack) - n - 1:-1]
        items = dict(zip(keys, ps))

        def result(real, pushed):
            return [self.new_list(real[-1], Map(items))]
        return n + 1, result

    def op_BUILD_SLICE(self, fr, ins, stk, frame):
        n = ins.arg
        for p, v in zip(fr.stack[len(fr.stack) - n:], stk[len(stk) - n:]):
            self.use(p, v, "a slice bound")
        return n, [CONST]

    def op_BUILD_STRING(self, fr, ins, stk, frame):
        n = ins.arg
        for p, v in zip(fr.stack[len(fr.stack) - n:], stk[len(stk) - n:]):
            self.use(p, v, "a formatted string")
        return n, [CONST]

    def op_FORMAT_VALUE(self, fr, ins, stk, frame):
        n = 2 if (ins.arg & 0x04) else 1
        for p, v in zip(fr.stack[len(fr.stack) - n:], stk[len(stk) - n:]):
            self.use(p, v, "a formatted value")
        return n, [CONST]

    def op_LIST_APPEND(self, fr, ins, stk, frame):
        lst = stk[-1 - ins.arg]
        p = self.prov_of_container(lst, fr.stack[-1 - ins.arg])
        if isinstance(p, Seq):
            p.items.append(fr.stack[-1])
        return 1, []

    def op_LIST_EXTEND(self, fr, ins, stk, frame):
        lst = stk[-1 - ins.arg]
        p = self.prov_of_container(lst, fr.stack[-1 - ins.arg])
        vp, v = fr.stack[-1], stk[-1]
        if isinstance(p, Seq):
            p.items.extend(self.items_of(vp, v))
        return 1, []

    def op_SET_ADD(self, fr, ins, stk, frame):
        self.use(fr.stack[-1], stk[-1], "an item of a set")
        return 1, []

    def op_SET_UPDATE(self, fr, ins, stk, frame):
        self.use(fr.stack[-1], stk[-1], "items of a set")
        return 1, []

    def op_MAP_ADD(self, fr, ins, stk, frame):
        d = stk[-3 - (ins.arg - 1)]
        p = self.prov_of_container(d, fr.stack[-3 - (ins.arg - 1)])
        self.use(fr.stack[-2], stk[-2], "a dict key")
        if isinstance(p, Map):
            p.items[stk[-2]] = fr.stack[-1]
        return 2, []

    def op_DICT_UPDATE(self, fr, ins, stk, frame):
        d = stk[-1 - ins.arg]
        p = self.prov_of_container(d, fr.stack[-1 - ins.arg])
        vp, v = self.prov_of_container(stk[-1], fr.stack[-1]), stk[-1]
        if isinstance(p, Map):
            if isinstance(vp, Map):
                p.items.update(vp.items)
            elif isinstance(vp, Src) and isinstance(v, dict):
                self.guard("type_eq", Expr("call", tuple, vp.e), tuple(v))
                for k in v:
                    p.items[k] = Src(Expr("item", vp.e, k))
            else:
                for k in v:
                    p.items[k] = Opaque("an item of a merged dict")
        return 1, []

    op_DICT_MERGE = op_DICT_UPDATE

    def op_LIST_TO_TUPLE(self, fr, ins, stk, frame):
        p = self.prov_of_container(stk[-1], fr.stack[-1])
        return 1, [Seq(p.items) if isinstance(p, Seq) else p]

    def items_of(self, p, v):
        """The provenance of each item of v, for unpacking or iterating it all at once."""
        if isinstance(p, Gen):
            raise Refused("a generator expression consumed where its items cannot be followed")
        if hasattr(type(v), "__next__"):
            # map, zip, filter, an iterator: reading its items here would use them up before the
            # body's own instruction runs (f(*map(g, xs)) would call f with no arguments)
            raise Refused(f"unpacks a {type(v).__name__} iterator, whose items are used up by reading them")
        p = self.prov_of_container(v, p)
        if isinstance(v, _tensor_type()):
            if isinstance(p, Src):
                self.guard("type_eq", Expr("call", len, p.e), len(v))
            return [CONST] * len(v)
        if isinstance(p, Seq) and len(p.items) == len(v):
            return list(p.items)
        if isinstance(p, Map):
            return [CONST if _is_prim(k) else Opaque("a key") for k in v]
        if isinstance(p, Src):
            if isinstance(v, (list, tuple)):
                self.guard("type_eq", Expr("call", len, p.e), len(v))
                return [Src(Expr("item", p.e, i)) for i in range(len(v))]
            if isinstance(v, dict):
                self.guard("type_eq", Expr("call", tuple, p.e), tuple(v))
                return [CONST] * len(v)
            lst = Expr("call", list, p.e)
            self.guard("type_eq", Expr("call", len, lst), len(list(v)))
            return [Src(Expr("item", lst, i)) for i in range(len(list(v)))]
        if p is CONST:
            return [CONST] * len(v) if _is_prim(tuple(v)) or isinstance(v, range) else [
                # a tensor: an op's result (max's (values, indices)); one from outside would be a
                # graph input with no source, which refuses the lift
                CONST if _is_prim(x) or _trusted_value(x) or isinstance(x, _tensor_type()) else
                Opaque("an item of a constant") for x in v]
        raise Refused(f"unpacks a value of unknown origin ({p.why if isinstance(p, Opaque) else p})")

    def op_UNPACK_SEQUENCE(self, fr, ins, stk, frame):
        if isinstance(fr.stack[-1], Gen):  # `a, b = (f(t) for t in ...)`: what it yields, once run
            gen, n = fr.stack[-1], ins.arg
            return 1, lambda real, pushed: list(reversed(gen.yields[-n:])) if len(gen.yields) >= n else [
                Opaque("an item of a generator")] * pushed
        items = self.items_of(fr.stack[-1], stk[-1])
        if len(items) != ins.arg:
            raise Refused("internal: unpacking a sequence of another length")
        return 1, list(reversed(items))

    def op_GET_ITER(self, fr, ins, stk, frame):
        v, p = stk[-1], fr.stack[-1]
        if isinstance(p, Iter):
            return 1, [p]
        if isinstance(p, Gen):  # a loop over a generator expression: item i is its i-th yield
            return 1, [Iter(lambda i, g=p: g.yields[i] if i < len(g.yields) else Opaque("past the end"))]
        p = self.prov_of_container(v, p)
        if isinstance(p, Seq) and type(v) is list:
            # A list made in the call may grow while iterated: follow its shadow.
            return 1, [Iter(lambda i, s=p: s.items[i] if i < len(s.items) else Opaque("past the end"))]
        if isinstance(p, Src) and not isinstance(v, (list, tuple, dict, range)) and not isinstance(
                v, _tensor_type()):
            lst = Expr("call", list, p.e)
            return 1, [Iter(lambda i, lst=lst: Src(Expr("item", lst, i)), Expr("call", len, lst))]
        if isinstance(p, Src) and isinstance(v, (list, tuple)):
            return 1, [Iter(lambda i, e=p.e: Src(Expr("item", e, i)), Expr("call", len, p.e))]
        if isinstance(p, Src) and isinstance(v, dict):
            self.guard("type_eq", Expr("call", tuple, p.e), tuple(v))
            return 1, [Iter([CONST] * len(v))]
        return 1, [Iter(self.items_of(p, v))]

    def op_FOR_ITER(self, fr, ins, stk, frame):
        it = fr.stack[-1]
        if not isinstance(it, Iter):
            raise Refused("iterates a value of unknown origin")

        # Popped here and pushed back with the item; on exhaustion CPython pops it, and its
        # length decided the trip count.
        def both(real, pushed):
            if pushed == 2:
                return [it, it.next()]
            if it.end_src is not None:
                self.guard("type_eq", it.end_src, it.i)
            return []
        return 1, both

    def _truth(self, p, v, why):
        if p is CONST:
            return
        if isinstance(p, Src) and not _is_prim(v):
            self.guard("bool", p.e, bool(v))
            return
        if isinstance(p, (Seq, Map)):
            return  # the length of a container made in the call is fixed by the guarded path
        self.use(p, v, why)

    def _jump_if(self, fr, ins, stk, frame):
        self._truth(fr.stack[-1], stk[-1], "a branch")
        return 1, []

    op_POP_JUMP_FORWARD_IF_TRUE = op_POP_JUMP_FORWARD_IF_FALSE = _jump_if
    op_POP_JUMP_BACKWARD_IF_TRUE = op_POP_JUMP_BACKWARD_IF_FALSE = _jump_if

    def _jump_if_none(self, fr, ins, stk, frame):
        p, v = fr.stack[-1], stk[-1]
        if isinstance(p, Src):
            self.guard("none", p.e, v is None)
        elif isinstance(p, Opaque):
            raise Refused(f"a branch depends on a value of unknown origin ({p.why})")
        return 1, []

    op_POP_JUMP_FORWARD_IF_NONE = op_POP_JUMP_FORWARD_IF_NOT_NONE = _jump_if_none
    op_POP_JUMP_BACKWARD_IF_NONE = op_POP_JUMP_BACKWARD_IF_NOT_NONE = _jump_if_none

    def _jump_or_pop(self, fr, ins, stk, frame):
        p = fr.stack[-1]
        self._truth(p, stk[-1], "a branch")

        def result(real, pushed):
            return [p] if pushed == 1 else []
        return 1, result

    op_JUMP_IF_TRUE_OR_POP = op_JUMP_IF_FALSE_OR_POP = _jump_or_pop

    def op_JUMP_FORWARD(self, fr, ins, stk, frame):
        return None

    op_JUMP_BACKWARD = op_JUMP_BACKWARD_NO_INTERRUPT = op_JUMP_FORWARD

    def _pure2(self, fn, pa, a, pb, b):
        """The provenance of fn(a, b) for a pure fn of Python values."""
        T = _tensor_type()
        if isinstance(a, T) or isinstance(b, T):
            scalars = []
            for p, v in ((pa, a), (pb, b)):
                if not isinstance(v, T):
                    scalars.append((p, v))
                elif isinstance(p, Src):
                    self.tensor_src(v, p.e)
            finish = self._defer_floats(scalars)
            if finish is None:
                return CONST

            def result(real, pushed):
                finish()
                return [CONST]
            return result
        if pa is CONST and pb is CONST:
            return CONST
        ok = all(isinstance(p, (Src, _Const)) and (_is_prim(v) or isinstance(p, Src)) for p, v in
                 ((pa, a), (pb, b)))
        if ok and _is_prim(a) and _is_prim(b):
            ea = pa.e if isinstance(pa, Src) else Expr("lit", a)
            eb = pb.e if isinstance(pb, Src) else Expr("lit", b)
            return Src(Expr("binop", fn, ea, eb))
        self.use(pa, a, "an operand")
        self.use(pb, b, "an operand")
        return CONST

    _BINOPS = {0: operator.add, 1: operator.and_, 2: operator.floordiv, 3: operator.lshift, 4: operator.matmul,
               5: operator.mul, 6: operator.mod, 7: operator.or_, 8: operator.pow, 9: operator.rshift,
               10: operator.sub, 11: operator.truediv, 12: operator.xor}

    def op_BINARY_OP(self, fr, ins, stk, frame):
        a, b = stk[-2], stk[-1]
        pa, pb = fr.stack[-2], fr.stack[-1]
        fn = self._BINOPS.get(ins.arg % 13)
        inplace = ins.arg >= 13
        if inplace and type(a) in (list, dict, set):
            raise Refused("an in-place operator on a container")
        if not inplace and type(a) in (list, tuple) and (fn is operator.add and type(b) is type(a) or
                                                         fn is operator.mul and type(b) is int):
            # a list or tuple made in the call, item by item (`[None] * n`, `a + b`): later stores
            # into it and reads of it are followed
            if fn is operator.mul:
                self.use(pb, b, "a repeat count")
                items = self.items_of(pa, a) * max(b, 0)
            else:
                items = self.items_of(pa, a) + self.items_of(pb, b)
            if type(a) is tuple:
                return 2, [Seq(items)]
            return 2, lambda real, pushed: [self.new_list(real[-1], Seq(items))]
        r = self._pure2(fn, pa, a, pb, b)
        return 2, (r if callable(r) else [r])

    _CMPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
             ">=": operator.ge}

    def op_COMPARE_OP(self, fr, ins, stk, frame):
        r = self._pure2(self._CMPS[ins.argval], fr.stack[-2], stk[-2], fr.stack[-1], stk[-1])
        return 2, (r if callable(r) else [r])

    def op_IS_OP(self, fr, ins, stk, frame):
        pa, pb, a, b = fr.stack[-2], fr.stack[-1], stk[-2], stk[-1]
        fn = operator.is_not if ins.arg else operator.is_
        if pa is CONST and pb is CONST:
            return 2, [CONST]
        if b is None and isinstance(pa, Src):
            return 2, [Src(Expr("binop", fn, pa.e, Expr("lit", None)))]
        if isinstance(pa, (Src, _Const)) and isinstance(pb, (Src, _Const)):
            ea = pa.e if isinstance(pa, Src) else Expr("k", a)
            eb = pb.e if isinstance(pb, Src) else Expr("k", b)
            return 2, [Src(Expr("binop", fn, ea, eb))]
        self.use(pa, a, "an identity test")
        self.use(pb, b, "an identity test")
        return 2, [CONST]

    def op_CONTAINS_OP(self, fr, ins, stk, frame):
        pa, pb, a, b = fr.stack[-2], fr.stack[-1], stk[-2], stk[-1]
        fn = (lambda x, y: x not in y) if ins.arg else (lambda x, y: x in y)
        if isinstance(pb, Src) and isinstance(b, (dict, set, frozenset, list, tuple, str)) and _is_prim(a):
            self.use(pa, a, "a membership test")
            return 2, [Src(Expr("binop", operator.contains, pb.e, Expr("lit", a)))] if not ins.arg else [
                Src(Expr("unary", operator.not_, Expr("binop", operator.contains, pb.e, Expr("lit", a))))]
        self.use(pa, a, "a membership test")
        pb2 = self.prov_of_container(b, pb)
        if not isinstance(pb2, (Seq, Map)):
            self.use(pb, b, "a membership test")
        del fn
        return 2, [CONST]

    def _unary(self, fn):
        def h(fr, ins, stk, frame):
            p, v = fr.stack[-1], stk[-1]
            if isinstance(v, _tensor_type()):
                if isinstance(p, Src):
                    self.tensor_src(v, p.e)
                return 1, [CONST]
            if p is CONST:
                return 1, [CONST]
            if isinstance(p, Src) and (_is_prim(v) or fn is operator.not_):
                if fn is operator.not_ and not _is_prim(v):
                    self.guard("bool", p.e, bool(v))
                    return 1, [CONST]
                return 1, [Src(Expr("unary", fn, p.e))]
            self.use(p, v, "an operand")
            return 1, [CONST]
        return h

    def op_UNARY_NOT(self, fr, ins, stk, frame):
        return self._unary(operator.not_)(fr, ins, stk, frame)

    def op_UNARY_NEGATIVE(self, fr, ins, stk, frame):
        return self._unary(operator.neg)(fr, ins, stk, frame)

    def op_UNARY_POSITIVE(self, fr, ins, stk, frame):
        return self._unary(operator.pos)(fr, ins, stk, frame)

    def op_UNARY_INVERT(self, fr, ins, stk, frame):
        return self._unary(operator.invert)(fr, ins, stk, frame)

    def op_BINARY_SUBSCR(self, fr, ins, stk, frame):
        obj, key = stk[-2], stk[-1]
        po, pk = fr.stack[-2], fr.stack[-1]
        if isinstance(obj, _tensor_type()) and isinstance(po, Src):
            self.tensor_src(obj, po.e)
        if isinstance(key, _tensor_type()):
            if isinstance(pk, Src):
                self.tensor_src(key, pk.e)
            pk = CONST
        if type(key) is slice:
            for x in (key.start, key.stop, key.step):
                if x is not None and not _is_prim(x) and not isinstance(x, _tensor_type()):
                    raise Refused("a slice bound of unknown kind")
        if isinstance(key, tuple):
            pk2 = self.prov_of_container(key, pk)
            if isinstance(pk2, Seq):
                for q, x in zip(pk2.items, key):
                    if isinstance(x, _tensor_type()):
                        if isinstance(q, Src):
                            self.tensor_src(x, q.e)
                    elif not isinstance(x, slice):
                        self.use(q, x, "an index")

        def result(real, pushed):
            if isinstance(pk, Seq) and isinstance(obj, _tensor_type()):
                return [CONST]
            return [self.item(po, obj, key, pk if not isinstance(pk, Seq) else CONST, real[-1])]
        return 2, result

    def op_STORE_SUBSCR(self, fr, ins, stk, frame):
        obj, key, val = stk[-2], stk[-1], stk[-3]
        po, pk, pv = fr.stack[-2], fr.stack[-1], fr.stack[-3]
        if isinstance(obj, _tensor_type()):
            if isinstance(val, _tensor_type()):
                if isinstance(pv, Src):
                    self.tensor_src(val, pv.e)
            else:
                self.use(pv, val, "a value stored into a tensor")
            if not isinstance(key, (tuple, slice, _tensor_type())):
                self.use(pk, key, "an index")
            return 3, []
        p = self.prov_of_container(obj, po)
        if isinstance(p, Seq) and type(key) is int:
            self.use(pk, key, "an index")
            p.items[key] = pv
            return 3, []
        if isinstance(p, Map):
            self.use(pk, key, "a key")
            p.items[key] = pv
            return 3, []
        raise Refused("stores an item into a container from outside the call (Python state outside the graph)")

    def op_DELETE_SUBSCR(self, fr, ins, stk, frame):
        p = self.prov_of_container(stk[-2], fr.stack[-2])
        if isinstance(p, Map):
            p.items.pop(stk[-1], None)
            return 2, []
        raise Refused("deletes an item of a container")

    def op_YIELD_VALUE(self, fr, ins, stk, frame):
        if fr.gen is None:
            raise Refused("yields: a generator's body runs outside the call")
        fr.gen.yields.append(fr.stack[-1])
        fr.gen.values.append(stk[-1])
        return 1, [CONST]  # popped; on resuming, the value sent (None) is pushed

    def op_RETURN_VALUE(self, fr, ins, stk, frame):
        return None  # the 'return' event takes the top of the stack

    def op_MAKE_FUNCTION(self, fr, ins, stk, frame):
        flags = ins.arg
        n = 1 + bin(flags & 0x0F).count("1")
        closure_p = None
        if flags & 0x08:
            # the closure tuple sits under the code object
            idx = 2
            closure_p = fr.stack[-idx]
            closure_v = stk[-idx]
        pos = 2
        for bit in (0x08, 0x04, 0x02, 0x01):
            if flags & bit:
                if bit in (0x02, 0x01):  # defaults of a function made here: fixed by what they were
                    self.use(self.prov_of_container(stk[-pos], fr.stack[-pos]), stk[-pos], "a default argument")
                pos += 1
        cells = []
        if closure_p is not None:
            items = closure_p.items if isinstance(closure_p, Seq) else []
            cells = list(zip(closure_v, items))

        def result(real, pushed):
            fn = real[-1]
            self.made_functions[id(fn)] = (fn, cells)
            return [CONST]
        return n, result

    def op_LOAD_CLOSURE(self, fr, ins, stk, frame):  # the cell object, for MAKE_FUNCTION
        return 0, [_CellRef(fr, ins.argval)]

    def op_BEFORE_WITH(self, fr, ins, stk, frame):
        mgr, p = stk[-1], fr.stack[-1]
        enter = getattr(type(mgr), "__enter__", None)
        if isinstance(enter, types.FunctionType) and not _library(enter.__code__):
            raise Refused(f"a context manager ({type(mgr).__name__}) of the program's own")
        self.use(p, mgr, "a context manager")
        self.scoped.add(id(mgr))
        return 1, [CONST, CONST]

    def op_CALL(self, fr, ins, stk, frame):
        n = ins.arg
        kwnames, fr.kwnames = fr.kwnames, ()
        vals = stk[len(stk) - n - 2:]
        provs = fr.stack[len(fr.stack) - n - 2:]
        if vals[0] is None and not isinstance(provs[0], Method):
            callee, cp = vals[1], provs[1]
            args, aps = list(vals[2:]), list(provs[2:])
        else:
            callee, cp = vals[0], provs[0]
            args, aps = list(vals[1:]), list(provs[1:])
        nkw = len(kwnames)
        pos, pos_p = args[:len(args) - nkw], aps[:len(aps) - nkw]
        kw = dict(zip(kwnames, args[len(args) - nkw:]))
        kw_p = dict(zip(kwnames, aps[len(aps) - nkw:]))
        return n + 2, self._call(fr, callee, cp, pos, pos_p, kw, kw_p)

    def op_CALL_FUNCTION_EX(self, fr, ins, stk, frame):
        has_kw = ins.arg & 1
        k = 1 + has_kw
        callee, cp = stk[-1 - k], fr.stack[-1 - k]
        args_v, args_p = stk[-k], fr.stack[-k]
        pos_p = self.items_of(args_p, args_v)  # refuses an iterator before anything reads it
        pos = list(args_v)
        kw, kw_p = {}, {}
        if has_kw:
            kw = dict(stk[-1])
            mp = self.prov_of_container(stk[-1], fr.stack[-1])
            if isinstance(mp, Map):
                kw_p = {key: mp.items.get(key, Opaque("a keyword")) for key in kw}
            elif isinstance(mp, Src):
                self.guard("type_eq", Expr("call", tuple, mp.e), tuple(kw))
                kw_p = {key: Src(Expr("item", mp.e, key)) for key in kw}
            else:
                kw_p = {key: mp if isinstance(mp, Opaque) else CONST for key in kw}
        return 2 + k, self._call(fr, callee, cp, pos, pos_p, kw, kw_p)

    def _callee_provs(self, f, pos_p, pos, kw_p):
        """The provenance of a Python callee's parameters and free variables (a function the call
        made reads its cells' provenance; another, its closure's sources)."""
        provs = _bind(f, pos_p, pos, kw_p)
        made = self.made_functions.get(id(f))
        if made is not None and made[0] is f:
            for name, (cell, cellp) in zip(f.__code__.co_freevars, made[1]):
                provs[("free", name)] = cellp.get() if isinstance(cellp, _CellRef) else Opaque("closure")
        else:
            provs.update(_closure_provs(f))
        return provs

    def _call(self, fr, callee, cp, pos, pos_p, kw, kw_p):
        T = _tensor_type()
        self_src = None
        # The callee is decided by its source.
        if isinstance(cp, Bound):
            self_src = cp.self_p
        elif isinstance(cp, Method):
            recv_p, name = cp.obj, cp.name
            recv = pos[0]
            if isinstance(recv_p, Src) and not isinstance(recv, T):
                e = Expr("attr", recv_p.e, name)
                self.guard("id", Expr("attr", e, "__func__"), callee) if isinstance(
                    callee, types.FunctionType) else self.guard("id", Expr("call", type, recv_p.e), type(recv))
            elif isinstance(recv_p, Opaque) and not isinstance(recv, T) and not isinstance(
                    callee, (types.MethodDescriptorType, types.BuiltinFunctionType, types.WrapperDescriptorType)):
                raise Refused(f"calls method {name} of a value of unknown origin ({recv_p.why})")
        elif isinstance(cp, Src):
            if isinstance(callee, types.MethodType):
                self_src = self._method_self(callee, cp)
            elif isinstance(callee, types.BuiltinMethodType) and cp.e.op == "attr" and isinstance(
                    getattr(callee, "__self__", None), (dict, list, tuple, set, str)) and type(
                    callee.__self__).__module__ in ("builtins", "collections"):
                # `get = d.get` then get(k): a new bound method at each lookup, so not its identity;
                # which C method it is follows from the receiver's (builtin) type
                self.guard("id", Expr("call", type, cp.e.args[0]), type(callee.__self__))
            else:
                self.guard("id", cp.e, callee)
        elif isinstance(cp, Opaque):
            if not (isinstance(callee, types.MethodType) and id(callee.__self__) in self.scoped):
                raise Refused(f"calls a function of unknown origin ({cp.why})")

        if type(callee) is _dyn._OutFunction:  # dyn.add and the like, with out= for torch
            if "out" in kw:
                raise Refused(f"calls {callee.__name__}(out=...), which writes its result into a tensor")
            callee = callee.__wrapped__
        f, self_obj = _resolve(callee)
        if isinstance(callee, types.MethodType) and id(callee.__self__) in self.scoped:
            return [CONST]  # a library context manager's __exit__: scoped global state
        if f is not None and not (f.__code__.co_flags & (0x20 | 0x80 | 0x100 | 0x200)):
            if self_obj is not _NULL:
                if self_src is not None:
                    sp = self_src
                elif isinstance(cp, Src):
                    sp = cp
                else:
                    sp = cp if isinstance(cp, (Src, Opaque)) else CONST
                pos, pos_p = [self_obj] + pos, [sp] + pos_p
            provs = self._callee_provs(f, pos_p, pos, kw_p)
            self.expect = (f.__code__, provs, f)

            def result(real, pushed, self=self):
                r = self.last_return
                self.last_return = None
                return [r if r is not None else Opaque("a call's result")]
            return result
        if f is not None and f.__code__.co_name == "<genexpr>" and f.__code__.co_flags & 0x20 and not kw:
            # A generator expression: its frame runs while something consumes it (tuple(), all(),
            # unpacking, a for loop); it is followed then, and what it yields is recorded.
            provs = self._callee_provs(f, pos_p, pos, kw_p)
            gen = Gen(provs, fr.func)

            def made_gen(real, pushed):
                self.gens[id(real[-1])] = (real[-1], gen)
                return [gen]
            return made_gen
        if f is not None:
            raise Refused(f"calls {f.__qualname__}, a generator or coroutine function")
        # A C callable, a class, or something else.
        name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", type(callee).__name__)
        owner = getattr(callee, "__self__", None)
        module = getattr(callee, "__module__", None) or getattr(type(owner), "__module__", "")
        if isinstance(owner, T) or (isinstance(callee, (types.MethodDescriptorType, types.WrapperDescriptorType))
                                    and issubclass(T, callee.__objclass__)):
            short = getattr(callee, "__name__", "")
            if short == "backward":
                return self._backward(pos if isinstance(owner, T) else pos[1:],
                                      pos_p if isinstance(owner, T) else pos_p[1:], kw, kw_p)
            if short in _TENSOR_IMPURE:
                raise Refused(f"calls Tensor.{short}(), which Python needs the value of or which changes state")
            recv_p = pos_p[0] if not isinstance(owner, T) else (cp.obj if isinstance(cp, Method) else cp)
            if isinstance(owner, T):
                if isinstance(cp, Src) and cp.e.op == "attr":
                    recv_p = Src(cp.e.args[0])
                args_v, args_p = pos, pos_p
            else:
                args_v, args_p = pos[1:], pos_p[1:]
            done = self._op_call(pos, pos_p, kw, kw_p)
            if isinstance(recv_p, Src) and not kw and all(_is_prim(v) for v in args_v):
                e = Expr("mcall", recv_p.e, short, *[Expr("lit", v) for v in args_v])

                def result(real, pushed, e=e):
                    done(real, pushed)  # the op's own bookkeeping (floats read at each call)
                    return [CONST if isinstance(real[-1], T) else Src(e)]
                return result
            return done
        if module in ("_dyn", "dyn") or (isinstance(owner, types.ModuleType) and owner.__name__ == "_dyn"):
            short = getattr(callee, "__name__", "")
            if short in _DYN_STATE or short.startswith("_") and short not in _DYN_OPS_PRIVATE:
                raise Refused(f"calls _dyn.{short}, which reads or changes state the graph does not hold")
            return self._op_call(pos, pos_p, kw, kw_p)
        if callee in _PURE_BUILTINS or module in _PURE_MODULES:
            return self._pure_call(callee, pos, pos_p, kw, kw_p)
        recv_p = None
        if owner is None and isinstance(callee, (types.MethodDescriptorType, types.WrapperDescriptorType)) and pos \
                and isinstance(pos[0], (list, dict, tuple, str, set, frozenset)) and isinstance(
                    pos[0], callee.__objclass__):
            owner, recv_p, pos, pos_p = pos[0], pos_p[0], pos[1:], pos_p[1:]  # list.append(lst, x) form
        if isinstance(owner, (list, dict, set)) and getattr(callee, "__name__", "") in _MUTATING:
            p = self.lists.get(id(owner))
            if p is None or p[0] is not owner:
                raise Refused(f"calls {type(owner).__name__}.{callee.__name__}() on a container from outside the call")
            return self._mutate(owner, p[1], callee.__name__, pos, pos_p)
        if recv_p is None and isinstance(cp, Src) and cp.e.op == "attr" and owner is not None:
            recv_p = Src(cp.e.args[0])  # `get = d.get`: the receiver's source
        if isinstance(owner, dict) and getattr(type(owner), "get", None) is dict.get and getattr(
                callee, "__name__", "") == "get" and isinstance(
                recv_p, Src) and len(pos) in (1, 2) and (
                    isinstance(pos_p[0], Src) or pos_p[0] is CONST and _is_prim(pos[0])) and (
                    len(pos) == 1 or pos_p[1] is CONST and _is_prim(pos[1])):
            # d.get(key) by a key re-evaluable too (an optimizer's state of a parameter, a module's
            # parameter by name): a source (the key is hashed, not read: no guard on it)
            ke = pos_p[0].e if isinstance(pos_p[0], Src) else Expr("lit", pos[0])
            args = (ke,) if len(pos) == 1 else (ke, Expr("lit", pos[1]))
            return [Src(Expr("mcall", recv_p.e, "get", *args))]
        if isinstance(owner, (list, dict, tuple, str, set, frozenset)):
            for p, v in zip(pos_p, pos):
                self.use(p, v, f"an argument of {name}")
            if isinstance(owner, dict) and callee.__name__ in ("items", "keys", "values"):
                if isinstance(recv_p, Src):
                    return [Src(Expr("mcall", recv_p.e, callee.__name__))]
                op = self.prov_of_container(owner, recv_p if recv_p is not None else CONST)
                return [Opaque("a dict view")] if not isinstance(op, Map) else self._dict_view(owner, op,
                                                                                           callee.__name__)
            if isinstance(owner, dict) and callee.__name__ == "get":
                return lambda real, pushed: [CONST if _is_prim(real[-1]) else Opaque("dict.get")]
            return [CONST]
        if isinstance(callee, type) and callee.__module__ in ("builtins",):
            return self._pure_call(callee, pos, pos_p, kw, kw_p)
        if isinstance(callee, type) and (callee.__module__ or "").split(".")[0] == "dyn" and not issubclass(
                callee, _tensor_type()):
            # A library object made in the call (dyn.no_grad(), a Size): from its guarded arguments
            for p, v in zip(pos_p, pos):
                self.use(p, v, f"an argument of {callee.__name__}")
            for k, v in kw.items():
                self.use(kw_p[k], v, f"an argument of {callee.__name__}")

            def made(real, pushed):
                self.new_objs[id(real[-1])] = real[-1]
                return [CONST]
            return made
        raise Refused(f"calls {name}, a C function dyn does not know to be pure")

    def _backward(self, pos, pos_p, kw, kw_p):
        """t.backward(): its ops join the graph; the .grad of each leaf it reaches is an effect."""
        T = _tensor_type()
        if kw.get("inputs") is not None or len(pos) > 3:
            raise Refused("calls backward(inputs=...): which leaves it fills is not modeled")
        for p, v in list(zip(pos_p, pos)) + [(kw_p[k], v) for k, v in kw.items()]:
            if isinstance(v, T):
                if isinstance(p, Src):
                    self.tensor_src(v, p.e)
            else:
                self.use(p, v, "an argument of backward()")
        start = _dyn._lift_grads(-1, [])
        if self.backward_at is None:
            self.backward_at = self.where

        def result(real, pushed):
            srcs = list(self.tensor_srcs.values())
            for k, old in _dyn._lift_grads(start, [t for t, _ in srcs]):
                if k < 0:
                    raise Refused("backward() sets the .grad of a tensor the call did not read from a place the "
                                  "next call could find it again")
                leaf, e = srcs[k]
                key = (id(leaf), "grad")
                if key not in self.written:  # it read the .grad the leaf had before the call
                    if old is None:
                        self.guard("none", Expr("attr", e, "grad"), True)
                    else:  # accumulated into: the old gradient is a graph input
                        self.tensor_src(old, Expr("attr", e, "grad"))
                self.written[key] = (leaf, CONST)
                self.grad_leaves.setdefault(id(leaf), (leaf, e))
            return [CONST] * pushed
        return result

    def add_effects(self, outs):
        """Before the region ends: the .grad each tensor the call set holds now, as (source, index
        of that tensor in outs, which gets it appended, or None); the graph computes them."""
        self.effects = []
        for leaf, e in self.grad_leaves.values():
            g = leaf.grad
            if g is not None:
                outs.append(g)
            self.effects.append((e, None if g is None else len(outs) - 1))
        self.grad_leaves.clear()

    def _dict_view(self, d, m, kind):
        keys = list(d)
        if kind == "keys":
            return [Seq([CONST] * len(keys))]
        if kind == "values":
            return [Seq([m.items.get(k, Opaque("a value")) for k in keys])]
        return [Seq([Seq([CONST, m.items.get(k, Opaque("a value"))]) for k in keys])]

    def _mutate(self, owner, p, meth, pos, pos_p):
        if isinstance(p, Seq):
            if meth == "append":
                p.items.append(pos_p[0])
            elif meth == "extend":
                p.items.extend(self.items_of(pos_p[0], pos[0]))
            elif meth == "pop" and not pos:
                p.items.pop()
            elif meth == "insert":
                self.use(pos_p[0], pos[0], "an index")
                p.items.insert(pos[0], pos_p[1])
            else:
                raise Refused(f"list.{meth}() on a list made in the call is not modeled")
            return lambda real, pushed: [CONST] * pushed
        if isinstance(p, Map):
            if meth == "update" and pos:
                src = self.prov_of_container(pos[0], pos_p[0])
                for k in pos[0]:
                    p.items[k] = src.items.get(k, Opaque("a value")) if isinstance(src, Map) else Opaque("a value")
            elif meth == "setdefault":
                self.use(pos_p[0], pos[0], "a key")
                p.items.setdefault(pos[0], pos_p[1] if len(pos_p) > 1 else CONST)
            elif meth == "pop":
                self.use(pos_p[0], pos[0], "a key")
                q = p.items.pop(pos[0], pos_p[1] if len(pos_p) > 1 else Opaque("a value"))
                return [q]
            else:
                raise Refused(f"dict.{meth}() on a dict made in the call is not modeled")
            return lambda real, pushed: [CONST] * pushed
        raise Refused("a container change that is not modeled")

    def _op_call(self, pos, pos_p, kw, kw_p):
        T = _tensor_type()
        if kw.get("generator") is not None:
            raise Refused("draws random numbers from a dyn.Generator: tier 2 advances only the default generator")

        def visit(p, v):
            if isinstance(v, T):
                if isinstance(p, Src):
                    self.tensor_src(v, p.e)
                return
            q = self.prov_of_container(v, p)
            if isinstance(v, (list, tuple)) and isinstance(q, Seq) and len(q.items) == len(v):
                for a, b in zip(q.items, v):
                    visit(a, b)
                return
            if isinstance(v, (list, tuple)) and isinstance(q, Src):
                if all(isinstance(x, T) for x in v):
                    self.guard("type_eq", Expr("call", len, q.e), len(v))
                    for i, x in enumerate(v):
                        self.tensor_src(x, Expr("item", q.e, i))
                    return
            scalars.append((q, v))
        scalars = []
        for p, v in zip(pos_p, pos):
            visit(p, v)
        for k, v in kw.items():
            visit(kw_p[k], v)
        visit = None  # recursive: a cycle through its cell otherwise
        finish = self._defer_floats(scalars)

        def result(real, pushed):
            if finish:
                finish()
            return [CONST] * pushed
        return result

    def _defer_floats(self, pairs):
        """The non-tensor operands of one tensor op. A float with a source is read at each call, as
        tier 1 reads it (a scalar input of the graph), when the op recorded one node that holds
        it; anything else is guarded. Returns what completes that once the op ran, or None."""
        deferred = []
        for p, v in pairs:
            if type(v) is float and isinstance(p, Src):
                deferred.append((p.e, v))
            else:
                self.use(p, v, "a non-tensor argument of a tensor op")
        if not deferred:
            return None
        before, where = _dyn._lift_nodes(), self.where

        def finish():
            after = _dyn._lift_nodes()
            for e, v in deferred:
                if before >= 0 and after == before + 1:
                    self.floats.append((before, e, v, where))
                else:
                    self.guard("type_eq", e, v)
        return finish

    def _pure_call(self, fn, pos, pos_p, kw, kw_p):
        T = _tensor_type()
        if pos and isinstance(pos_p[0], Gen) and fn in (tuple, list, all, any, sum, min, max, sorted, set):
            gen = pos_p[0]
            for k, v in kw.items():
                self.use(kw_p[k], v, f"a keyword of {fn.__name__}")

            def consumed(real, pushed):
                if fn is tuple:
                    return [Seq(list(gen.yields))]
                if fn is list:
                    return [self.new_list(real[-1], Seq(list(gen.yields)))]
                for q, v in zip(gen.yields, gen.values):  # all(), sum(), ...: decided by each item read
                    self.use(q, v, f"an item {fn.__name__}() read")
                gen.values.clear()
                return [CONST]
            return consumed
        if kw:
            for k, v in kw.items():
                self.use(kw_p[k], v, f"a keyword of {getattr(fn, '__name__', fn)}")
        if fn is len and len(pos) == 1:
            p, v = self.prov_of_container(pos[0], pos_p[0]), pos[0]
            if isinstance(p, Src):
                return [Src(Expr("call", len, p.e))]
            if isinstance(p, Opaque):
                raise Refused(f"len() of a value of unknown origin ({p.why})")
            return [CONST]
        if fn in (isinstance, type, hasattr, callable) and pos and isinstance(pos_p[0], Src):
            rest = pos[1:]
            for p, v in zip(pos_p[1:], rest):
                self.use(p, v, f"an argument of {fn.__name__}")
            if isinstance(pos[0], T) and fn is not hasattr:
                return [CONST]
            return [Src(Expr("call", fn, pos_p[0].e, *[Expr("lit", r) for r in rest]))]
        if fn is getattr and len(pos) >= 2 and type(pos[1]) is str:
            self.use(pos_p[1], pos[1], "an attribute name")
            if len(pos) == 3:
                self.use(pos_p[2], pos[2], "a default")
            obj, p = pos[0], pos_p[0]
            return lambda real, pushed: [self.attr(p, obj, pos[1], real[-1])] if hasattr(obj, pos[1]) else [CONST]
        if fn in (iter, enumerate, zip, reversed, range, list, tuple, sorted, dict) and fn is not dict or (
                fn is dict and not pos):
            if fn is range:
                for p, v in zip(pos_p, pos):
                    self.use(p, v, "a range bound")
                return lambda real, pushed: [CONST]
            if fn is enumerate:
                items = self.items_of(pos_p[0], pos[0])
                return [Iter([Seq([CONST, q]) for q in items])]
            if fn is zip:
                cols = [self.items_of(p, v) for p, v in zip(pos_p, pos)]
                return [Iter([Seq(list(row)) for row in zip(*cols)])]
            if fn is iter and len(pos) == 1:
                p = pos_p[0]
                if isinstance(p, Iter):
                    return [p]
                return [Iter(self.items_of(p, pos[0]))]
            if fn is reversed:
                return [Iter(list(reversed(self.items_of(pos_p[0], pos[0]))))]
            if fn in (list, tuple):
                items = self.items_of(pos_p[0], pos[0]) if pos else []
                if isinstance(pos_p[0] if pos else None, Iter):
                    raise Refused("materializes an iterator")
                if fn is list:
                    return lambda real, pushed: [self.new_list(real[-1], Seq(items))]
                return [Seq(items)]
            if fn is dict:
                return lambda real, pushed: [self.new_list(real[-1], Map({}))]
            for p, v in zip(pos_p, pos):
                self.use(p, v, f"an argument of {fn.__name__}")
            return [CONST]
        if fn is next:
            p = pos_p[0]
            if isinstance(p, Iter):
                return [p.next()]
            raise Refused("next() of an iterator that is not modeled")
        if fn is super:
            if pos:
                raise Refused("super() with arguments")
            first = self.cur.code.co_varnames[0] if self.cur.code.co_argcount else None
            sp = self.cur.cells.get(first, self.cur.locals.get(first)) if first else None
            if isinstance(sp, Src):
                # what super() finds depends on the class of self: fixed by this guard
                self.guard("id", Expr("call", type, sp.e), type(self.cur.frame.f_locals.get(first)))
            elif sp is not CONST:
                raise Refused("super() in a method whose self is of unknown origin")
            return [Super(sp)]
        if any(isinstance(v, T) for v in pos):
            return self._op_call(pos, pos_p, kw, kw_p)
        for p, v in zip(pos_p, pos):
            q = self.prov_of_container(v, p)
            if isinstance(q, (Seq, Map)):
                self.use(q, v, f"an argument of {getattr(fn, '__name__', fn)}")
            else:
                self.use(p, v, f"an argument of {getattr(fn, '__name__', fn)}")
        return lambda real, pushed: [CONST] * pushed



class _CellRef(Prov):
    """A cell of a traced frame (LOAD_CLOSURE), for the functions made in the call."""
    __slots__ = ("fr", "name")

    def __init__(self, fr, name):
        self.fr, self.name = fr, name

    def get(self):
        return self.fr.cells.get(self.name, Opaque(f"closure variable {self.name}"))


# ---- the lift: guards, fetches, rebuild ----


class Lift:
    """A lifted entry: one generated function checks the guards, fetches the inputs, runs the
    plan and rebuilds the result."""

    def __init__(self, entry, lines, fn, plan, instructions, seconds, nargs, kwnames):
        # Only text: a lift holds nothing of the program's strongly (see Codegen).
        self.entry, self.lines, self.fn, self.plan = entry, lines, fn, plan
        self.instructions, self.seconds = instructions, seconds
        self.nargs, self.kwnames = nargs, kwnames
        self.hits = 0
        self.verified = 0  # hits verify mode checked against the body

    def guard_lines(self):
        """Each Python guard as (text, where it was read)."""
        return list(self.lines)


def _tensor_meta(t):
    """What an op can read of a tensor besides its values."""
    return (type(t), t.dtype, tuple(t.shape), t.stride(), t.requires_grad, str(t.device))


def _meta_text(t):
    return f"{str(t.dtype).replace('dyn.', '')}{list(t.shape)} strides {list(t.stride())}" + (
        ", requires_grad" if t.requires_grad else "")


_META_ATTRS = {"shape", "ndim", "dtype", "requires_grad", "device", "is_cuda", "layout", "is_sparse", "is_quantized"}
_META_METHODS = {"size", "dim", "ndimension", "stride", "is_contiguous", "numel", "nelement", "is_floating_point",
                 "is_complex", "element_size", "get_device"}


def _implied_by_tensor_guards(e, input_exprs):
    """e is computed from constants and the guarded metadata of graph inputs alone."""
    op, a = e.op, e.args
    if op == "lit":
        return True
    if op == "attr" and a[1] in _META_ATTRS and a[0] in input_exprs:
        return True
    if op == "attr" and a[0].op == "attr" and a[0].args[1] == "dtype":  # x.dtype.is_floating_point
        return _implied_by_tensor_guards(a[0], input_exprs)
    if op == "mcall" and a[1] in _META_METHODS and a[0] in input_exprs:
        return all(_implied_by_tensor_guards(x, input_exprs) for x in a[2:])
    if op == "item":
        return _implied_by_tensor_guards(a[0], input_exprs)
    if op in ("binop", "unary"):
        return all(_implied_by_tensor_guards(x, input_exprs) for x in a[1:])
    if op == "call" and a[0] in (len, tuple, list, int, bool, float):
        return all(_implied_by_tensor_guards(x, input_exprs) for x in a[1:])
    return False


def _expected_text(g):
    v = g.value
    if g.kind == "type_eq":
        return repr(v)
    if g.kind == "bool":
        return f"bool() {v}"
    if g.kind == "none":
        return "None" if v else "not None"
    if g.kind == "absent":
        return "not a global"
    if g.kind == "same":
        return "the same object"
    return getattr(v, "__qualname__", None) or f"the {type(v).__name__} seen when traced"


def key_of(t, e):
    return (id(t), e)


def _build(tracer, result, outs, snapshot):
    """Code that checks the guards, fetches the inputs and rebuilds the result; raises Refused."""
    of_sources, out_ids, graph_inputs = snapshot
    T = _tensor_type()
    cg = Codegen()
    body = []

    def emit_guard(g):
        if g.kind == "absent":
            return f"{g.value!r} not in {cg.expr(g.e)}"
        code = cg.expr(g.e)
        if g.kind == "type_eq":
            v = g.value
            if isinstance(v, (list, dict)):
                return f"type({code}) is {cg.k(type(v))} and {code} == {cg.k(v)}"
            if type(v) is bool or v is None:
                return f"{code} is {v}"  # singletons
            if type(v) is float and v != v:
                return "False"
            if type(v) is float and v == 0:  # 0.0 == -0.0, but an op may tell them apart
                return f"type({code}) is float and {code} == 0.0 and {cg.k(math.copysign)}(1.0, {code}) == " \
                       f"{math.copysign(1.0, v)!r}"
            return f"type({code}) is {cg.k(type(v))} and {code} == {cg.lit(v)}"
        if g.kind == "id":
            return f"{code} is {cg.k(g.value)}"
        if g.kind == "bool":  # truthiness, as the branch tested it
            return code if g.value else f"not {code}"
        if g.kind == "none":
            return f"{code} is None" if g.value else f"{code} is not None"
        if g.kind == "same":
            return f"{code} is {cg.expr(g.other)}"
        raise AssertionError(g.kind)

    # The engine checks each graph input's dtype, shape, strides and requires_grad: a Python guard
    # over only those of graph inputs is implied, and skipped.
    srcs = list(tracer.tensor_srcs.values())
    input_exprs = {e for (t, e), vid in zip(srcs, of_sources) if vid >= 0}
    infos = []  # per guard in the code: (text, what it expected, where); a miss stores its index and value

    def check(cond, value_code, text, expected, where):
        infos.append((text, expected, where))
        body.append(f"if not ({cond}): L[0] = ({len(infos) - 1}, {value_code}); return MISS")

    for g in tracer.guards:
        if g.kind in ("type_eq", "bool", "none") and _implied_by_tensor_guards(g.e, input_exprs):
            continue
        n0 = len(cg.lines)
        cond = emit_guard(g)
        body.extend(cg.lines[n0:])
        del cg.lines[n0:]
        code = "None" if g.kind in ("absent", "same") else cg.expr(g.e)
        check(cond, code, g.text(tracer.names), _expected_text(g), g.where)
    # graph inputs, in the plan's order: every source of one (a tensor read from two places is
    # fetched from both; the engine checks they are one tensor again)
    srcs = list(tracer.tensor_srcs.values())
    input_ids, fetch = [], []
    for (t, e), vid in zip(srcs, of_sources):
        if vid == -2:
            raise Refused("a tensor the call reads shares memory with another input (a view of it): tier 2 does "
                          "not check views of inputs yet")
        if vid == -3:
            continue  # a value the call made: the graph fixes its metadata
        if vid < 0:
            # no graph input: an op read only its metadata (ones_like(x)), which the graph baked
            n0 = len(cg.lines)
            code = cg.expr(e)
            body.extend(cg.lines[n0:])
            del cg.lines[n0:]
            check(f"{cg.k(_tensor_meta)}({code}) == {cg.k(_tensor_meta(t))}", f"{cg.k(_meta_text)}({code})",
                  f"the metadata of {_text(e, tracer.names)}", _meta_text(t), tracer.where_of.get(key_of(t, e), ""))
            tracer.meta_lines.append((f"{_text(e, tracer.names)}: {_meta_text(t)} (its metadata is baked in)",
                                      tracer.where_of.get(key_of(t, e), "")))
            continue
        n0 = len(cg.lines)
        code = cg.expr(e)
        body.extend(cg.lines[n0:])
        del cg.lines[n0:]
        input_ids.append(vid)
        fetch.append(code)
    float_slots, float_fetch = [], []
    for node, e, v, where in tracer.floats:
        slot = _dyn._lift_float_slot(tracer.state, node, v)
        n0 = len(cg.lines)
        code = cg.expr(e)
        body.extend(cg.lines[n0:])
        del cg.lines[n0:]
        if slot < 0:  # not found in the node: the value itself is guarded
            g = Guard("type_eq", e, v, where)
            check(emit_guard(g), code, g.text(tracer.names), repr(v), where)
            tracer.meta_lines.append((g.text(tracer.names), where))
            continue
        float_slots += [node, slot]
        float_fetch.append(code)
        tracer.meta_lines.append((f"{_text(e, tracer.names)} is a float read at each call ({v!r} when traced)", where))
    # effects: the .grad of each tensor the call set, stored after the graph ran; its holder is
    # found before (the sources read what the body read)
    effect_lines, holders = [], []
    for e, j in tracer.effects:
        if j is not None and out_ids[j] < 0:
            raise Refused("the call leaves a .grad that is not a value of its graph")
        n0 = len(cg.lines)
        code = cg.expr(e)
        body.extend(cg.lines[n0:])
        del cg.lines[n0:]
        holders.append(code)
        effect_lines.append(f"{code}.grad = {'None' if j is None else f'R[{j}]'}")
    missing = sorted(set(graph_inputs) - set(input_ids))
    if missing:
        raise Refused(f"input %{missing[0]} of the graph has no source the next call could fetch it from")
    # the result
    value, prov = result

    def rebuild(v, p):
        if isinstance(v, T):
            # A tensor from outside the call (an argument written in place and returned, or one
            # only read): the same object again, fetched from its source, as the body returns it.
            # Not a tensor made in the call that a source reached (an item of a list it made).
            for pass_ in (0, 1):
                for (t, e), vid in zip(srcs, of_sources):
                    if t is v and (vid >= 0 if pass_ == 0 else vid == -1):
                        n0 = len(cg.lines)
                        code = cg.expr(e)
                        body.extend(cg.lines[n0:])
                        del cg.lines[n0:]
                        return code
                if pass_ == 0:
                    for j, t in enumerate(outs):
                        if t is v and out_ids[j] >= 0:
                            return f"R[{j}]"
            raise Refused("the function returns a tensor that is not a value of its graph")
        p = tracer.prov_of_container(v, p) if isinstance(v, (list, dict)) else p
        if v is None or (p is CONST and _is_prim(v)):
            return cg.lit(v)
        if isinstance(p, Src) and (_is_prim(v) or not isinstance(v, (list, tuple, dict))):
            n0 = len(cg.lines)
            code = cg.expr(p.e)
            body.extend(cg.lines[n0:])
            del cg.lines[n0:]
            return code
        if type(v) in (tuple, list) and isinstance(p, Seq) and len(p.items) == len(v):
            parts = [rebuild(x, q) for x, q in zip(v, p.items)]
            return ("(" + ", ".join(parts) + ",)") if type(v) is tuple else "[" + ", ".join(parts) + "]"
        if type(v) is dict and isinstance(p, Map) and all(_is_prim(k) for k in v):
            return "{" + ", ".join(f"{cg.lit(k)}: {rebuild(x, p.items.get(k, Opaque('a value')))}"
                                   for k, x in v.items()) + "}"
        if p is CONST and _trusted_value(v):
            return cg.k(v)
        raise Refused(f"the function returns a {type(v).__name__} that cannot be rebuilt without the body")

    ret_code = rebuild(value, prov)
    tracer.guard_infos = infos
    rebuild = None  # a recursive closure is a cycle (through its cell): it would keep the tracer to a gc
    tracer.effect_holders = holders
    return body, fetch, input_ids, ret_code, cg, float_slots, float_fetch, effect_lines


def _compile_hit(body, fetch, ret_code, cg, plan, nargs, kwnames, float_fetch, missed, effect_lines, holders):
    """hit(A, KW, C, M): the call served (or MISS); and fetch(A, KW, M): the inputs and the holders of
    the .grad the call sets, without running anything (or MISS), for verify mode."""
    def head(name, args):
        src = [f"def {name}({args}):"]
        src.append(f"    if len(A) != {nargs} or len(KW) != {len(kwnames)}: return MISS")
        for k in kwnames:
            src.append(f"    if {k!r} not in KW: return MISS")
        src.append("    try:")
        for line in body:
            src.append("        " + line)
        src.append(f"        I = ({''.join(c + ', ' for c in fetch)})")
        return src
    src = head("hit", "A, KW, C, M")
    if float_fetch:
        src.append(f"        F = ({''.join(c + ', ' for c in float_fetch)})")
    src.append("    except Exception:")
    src.append("        return MISS")
    src.append("    R = PLAN(I, C, F)" if float_fetch else "    R = PLAN(I, C)")
    src.append("    if R is None: return MISS")
    src.extend("    " + line for line in effect_lines)
    src.append(f"    return {ret_code}")
    text = "\n".join(src)
    src = head("fetch", "A, KW, M")
    src.append(f"        E = ({''.join(c + ', ' for c in holders)})")
    src.append("    except Exception:")
    src.append("        return MISS")
    src.append("    return I, E")
    ns = {"K": cg.consts, "MISS": _MISS, "PLAN": plan, "L": [None]}
    exec(compile("\n".join(src), "<dyn lifted call: fetch>", "exec"), ns)
    fetch_fn = ns.pop("fetch")
    ns = {"K": cg.consts, "MISS": _MISS, "PLAN": plan, "L": missed}
    exec(compile(text, "<dyn lifted call>", "exec"), ns)
    return ns.pop("hit"), text, fetch_fn  # not left in their globals: a cycle would keep the plan until a gc


def names_for(owner):
    """How the user writes the call's sources: the parameters' names, `self` for a module."""
    names = {}
    target = owner._fn
    params = owner._arg_names
    if owner._module is not None:
        names["root"] = "self"
        params = params[1:] if params and params[0] == "self" else params
    else:
        names["root"] = getattr(target, "__name__", "fn")
    for i, p in enumerate(params):
        names[("arg", i)] = p
    return names


def result_tensors(result):
    """The tensors of the result, in rebuild order (before the region ends)."""
    T = _tensor_type()
    out = []

    def walk(v):
        if isinstance(v, T):
            if not any(t is v for t in out):
                out.append(v)
        elif type(v) in (tuple, list):
            for x in v:
                walk(x)
        elif type(v) is dict:
            for x in v.values():
                walk(x)
    walk(result)
    walk = None  # recursive: a cycle through its cell otherwise (holding the result's tensors)
    return out


def make_lift(owner, tracer, result, outs, snapshot, seconds):
    """After a traced call ended: a Lift for the entry that served it; raises Refused."""
    if snapshot is None:
        why = _dyn._lift_plan(owner._state, [], [], [])  # the engine's words: which break, where
        if isinstance(why, tuple):
            raise Refused(*why)
        raise Refused("the call broke its graph: Python runs between the graphs")
    tracer.names = names_for(owner)
    tracer.state = owner._state
    if tracer.backward_at is not None:
        # backward() in the body reached the inputs that require grad as the leaves they were:
        # each must be a leaf again (a non-leaf's gradient flows on, through history from
        # outside the call that the graph does not hold)
        for (t, e), vid in zip(tracer.tensor_srcs.values(), snapshot[0]):
            if vid >= 0 and t.requires_grad:
                if t.grad_fn is not None:
                    raise Refused(f"backward() runs into autograd history from outside the call ("
                                  f"{_text(e, tracer.names)} is not a leaf)", tracer.backward_at)
                n = len(tracer.guards)
                tracer.guard("none", Expr("attr", e, "grad_fn"), True)
                # and one a hook registered since would see its gradient: Python the body runs
                tracer.guard("none", Expr("attr", e, "_backward_hooks"), True)
                for g in tracer.guards[n:]:
                    g.where = tracer.backward_at
    body, fetch, input_ids, ret_code, cg, float_slots, float_fetch, effect_lines = _build(
        tracer, tracer.ret, outs, snapshot)
    plan = _dyn._lift_plan(owner._state, input_ids, list(snapshot[1]), float_slots)
    if isinstance(plan, tuple):
        raise Refused(*plan)
    nargs = tracer.nargs
    missed = [None]
    hit, text, fetch_fn = _compile_hit(body, fetch, ret_code, cg, plan, nargs, tracer.kwnames, float_fetch, missed,
                                       effect_lines, tracer.effect_holders)
    names = tracer.names
    lift = Lift(plan.entry, [(g.text(names), g.where) for g in tracer.guards] + tracer.meta_lines, hit, plan,
                tracer.instructions,
                seconds, nargs, tracer.kwnames)
    lift.code = text
    lift.fetch = fetch_fn
    lift.effects = [f"{_text(e, names)}.grad = {'None' if j is None else 'a gradient the graph computes'}"
                    for e, j in tracer.effects]
    lift.missed, lift.infos = missed, tracer.guard_infos
    return lift


class State:
    """Verify mode for a lift with effects: the tensors its graph writes and the .grad it sets,
    kept before the lifted call, what it left, and put back so that the body runs from the same
    state; compare() then checks the body left the same."""

    @staticmethod
    def before(lift, args, kwargs, root):
        writes = lift.plan.writes
        if not writes and not lift.effects and not lift.plan.random:
            return None
        f = lift.fetch(args, kwargs, root)
        if f is _MISS:
            return None  # the lifted call misses too: nothing runs
        st = State()
        st.rng = _dyn._rng_state()
        inputs, st.holders = f
        st.written = [inputs[i] for i in writes]
        with _no_grad():
            st.values = [t.detach().clone() for t in st.written]
        st.grads = [h.grad for h in st.holders]
        return st

    def after(self):
        with _no_grad():
            self.lifted_values = [t.detach().clone() for t in self.written]
        self.lifted_grads = [h.grad for h in self.holders]
        self.lifted_rng = _dyn._rng_state()
        self.restore()

    def restore(self):
        _dyn._rng_state(self.rng)
        with _no_grad():
            for t, v in zip(self.written, self.values):
                t.detach().copy_(v)
        for h, g in zip(self.holders, self.grads):
            h.grad = g

    def compare(self):
        if _dyn._rng_state() != self.lifted_rng:
            return f"the generator at {self.lifted_rng} where the body leaves it at {_dyn._rng_state()}"
        for i, (t, v) in enumerate(zip(self.written, self.lifted_values)):
            p = compare(v, t.detach(), f"the tensor the graph writes (input {i})")
            if p:
                return p
        for i, (h, g) in enumerate(zip(self.holders, self.lifted_grads)):
            if (g is None) != (h.grad is None):
                return f".grad {'None' if g is None else 'set'} for tensor {i} where the body leaves it " + (
                    "None" if h.grad is None else "set")
            p = "" if g is None else compare(g, h.grad, f"the .grad of tensor {i}")
            if p:
                return p
        return ""


def _no_grad():
    import dyn
    return dyn.no_grad()


def compare(got, want, path="the result"):
    """'' when got and want are the same (tensors bit for bit), else what differs."""
    T = _tensor_type()
    if isinstance(want, T):
        if not isinstance(got, T):
            return f"{type(got).__name__} for {path} where a tensor was expected"
        if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
            return f"{got.dtype}{list(got.shape)} for {path} where {want.dtype}{list(want.shape)} was expected"
        a, b = (t.detach().contiguous() for t in (got, want))
        if a.dtype == _dyn.bfloat16:  # numpy has none; the same bits as int16
            a, b = a.view(_dyn.int16), b.view(_dyn.int16)
        a, b = a.numpy(), b.numpy()
        if a.tobytes() != b.tobytes():
            return f"other values for {path}"
        if got.requires_grad != want.requires_grad:
            return f"requires_grad={got.requires_grad} for {path}"
        gf, wf = got.grad_fn, want.grad_fn
        if (gf is None) != (wf is None) or (gf is not None and type(gf).__name__ != type(wf).__name__) or (
                gf is not None and getattr(gf, "name", lambda: "")() != getattr(wf, "name", lambda: "")()):
            return f"grad_fn {gf} for {path} where {wf} was expected"
        return ""
    if type(got) is not type(want):
        return f"a {type(got).__name__} for {path} where a {type(want).__name__} was expected"
    if isinstance(want, (list, tuple)):
        if len(got) != len(want):
            return f"{len(got)} items for {path} where {len(want)} were expected"
        for i, (x, y) in enumerate(zip(got, want)):
            p = compare(x, y, f"{path}[{i}]")
            if p:
                return p
        return ""
    if isinstance(want, dict):
        if list(got) != list(want):
            return f"keys {list(got)} for {path}"
        for k in want:
            p = compare(got[k], want[k], f"{path}[{k!r}]")
            if p:
                return p
        return ""
    if got is want or got == want:
        return ""
    return f"{got!r} for {path} where {want!r} was expected"


def describe_miss(lift):
    """Why lift's last try did not serve the call, as one line (then forgets the value it kept), or
    None when it did not get as far as a guard (another call shape)."""
    m = lift.missed[0]
    lift.missed[0] = None
    if m is None:
        why = lift.plan.last_failure
        return f"the engine's check failed: {why}" if why else None
    i, value = m
    text, expected, where = lift.infos[i]
    try:
        actual = repr(value)
    except Exception:  # noqa: BLE001 - a repr that raises is only a worse message
        actual = f"a {type(value).__name__}"
    if len(actual) > 80:
        actual = actual[:77] + "..."
    return f"{text} failed (expected {expected}, got {actual}) at {where.rsplit('/', 1)[-1]}"
