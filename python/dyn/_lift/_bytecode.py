"""Bytecode analysis for the concolic pass: _Frame (a traced frame: its instructions by offset,
the modeled value stack, locals and cells), the instruction cache, binding a callee's parameters'
provenance as CPython binds them (defaults are sources), the expressions of closure cells and
globals, and which Python function calling a callee runs first.
"""
import dis
import types
import weakref

from ._expr import Expr
from ._prov import CONST, _NULL, Map, Refused, Seq, Src, _is_prim, _library, _trusted_value


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
