"""The Tracer's calls: CALL and CALL_FUNCTION_EX, and what a call is: a Python callee the pass
follows into (its parameters' provenance bound), a generator expression, a tensor op (recorded in
the graph; its non-tensor operands guarded, its floats read at each call), backward() and the
.grad it sets, a method changing a container made in the call, a pure builtin, or a refusal.
_Calls, mixed into Tracer (_tracer).
"""
import types

import _dyn

from ._bytecode import _bind, _closure_provs, _resolve
from ._expr import Expr
from ._prov import (CONST, _DYN_OPS_PRIVATE, _DYN_STATE, _MUTATING, _NULL, _PURE_BUILTINS, _PURE_MODULES,
                    _TENSOR_IMPURE, Bound, Gen, Iter, Map, Method, Opaque, Refused, Seq, Src, Super, _CellRef,
                    _is_prim, _tensor_type)


class _Calls:
    """Tracer's handlers and helpers for calls."""

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
