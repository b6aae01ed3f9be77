"""Sources as expressions and their guards: Expr (how a value is re-evaluated from the call's
arguments and the objects it read), Codegen (the Python code that evaluates expressions once each,
holding the program's constants weakly), _text (an expression as the user would write it) and
Guard (a predicate over a source that a lifted call checks, with the text that explains it).
"""
import math
import operator
import types
import weakref


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
