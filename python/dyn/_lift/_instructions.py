"""The Tracer's instruction handlers for the value stack, locals, cells, globals and attributes,
building containers and iterating them: _Instructions, mixed into Tracer (_tracer). Also _finish
and _step, which run a handler for each instruction and complete the provenance of what the
previous one pushed.
"""
import types

import _dyn

from ._bytecode import _globals_expr
from ._expr import Expr
from ._prov import (CONST, Bound, Decided, Gen, Iter, Map, Method, Opaque, Refused, Seq, Src, _is_prim, _tensor_type,
                    _trusted_value)


class _Instructions:
    """Tracer's handlers: stack, variables, attributes, containers, iteration."""

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
