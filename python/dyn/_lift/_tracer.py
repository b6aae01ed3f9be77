"""The concolic pass over one tier-1 call: Tracer, with its entry points (start, finish, refuse),
the trace callbacks that follow the body's frames one instruction at a time, and the provenance
helpers the instruction handlers share (guard, use, tensor_src, attr, item, ...). The handlers
themselves are mixed in from _instructions, _operators and _calls.
"""
import sys
import types

from ._bytecode import _YIELD, _bind, _closure_provs, _Frame, _resolve
from ._calls import _Calls
from ._expr import Expr, Guard
from ._instructions import _Instructions
from ._operators import _Operators
from ._prov import (CONST, _IMPORT_HOOKS, _NULL, _STDLIB, _TENSOR_SOURCE_ATTRS, Bound, Iter, Map, Method, Opaque,
                    Refused, Seq, Src, Super, _is_module, _is_prim, _library, _tensor_type, _trusted_value)


class Tracer(_Instructions, _Operators, _Calls):
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
