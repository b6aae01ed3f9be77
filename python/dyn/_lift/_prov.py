"""Provenance: where a value the traced body holds came from (a constant, a source re-evaluable
at the next call, a container made in the call, an iterator, a method slot, ...), the Refused
exception that keeps an entry on tier 1, and what the pass takes as fixed or pure: the library's
own code (_PKG), primitive and trusted values, and the tables of builtins, modules, tensor methods
and _dyn functions that read their arguments only (or that change state the graph does not hold).
"""
import builtins
import os
import types

import _dyn


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # dyn/, above this package
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


class _CellRef(Prov):
    """A cell of a traced frame (LOAD_CLOSURE), for the functions made in the call."""
    __slots__ = ("fr", "name")

    def __init__(self, fr, name):
        self.fr, self.name = fr, name

    def get(self):
        return self.fr.cells.get(self.name, Opaque(f"closure variable {self.name}"))


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
    from ..nn.modules.module import Module
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
