"""The Tracer's instruction handlers for branches (what decided them is guarded), binary, compare,
identity, membership and unary operators, subscripts, yields and returns, functions made in the
call and with blocks: _Operators, mixed into Tracer (_tracer).
"""
import operator
import types

from ._expr import Expr
from ._prov import CONST, Map, Opaque, Refused, Seq, Src, _CellRef, _Const, _is_prim, _library, _tensor_type


class _Operators:
    """Tracer's handlers: branches, operators, subscripts, functions, with."""

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
            if isinstance(po, Src):
                # the tensor written is an input too: fetched and checked at the next call (a view
                # of another input written here wrote into that input's memory when traced)
                self.tensor_src(obj, po.e)
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
