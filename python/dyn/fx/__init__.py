"""dyn.fx (torch.fx): symbolic tracing of a function or nn.Module into a Graph of Nodes, graph
editing (create, insert, replace, erase, lint), and GraphModule, which runs the Python code generated
from the graph. The tracer runs the function on Proxy objects: tensor methods and operators on a
Proxy, dyn's functions (torch.*, torch.nn.functional.*) called with one, leaf submodules (those of
torch.nn) and parameters read from the module become nodes. Control flow that needs a Proxy's value
raises TraceError, as torch.fx's does."""
import builtins
import contextlib
import inspect
import keyword
import operator
import re

import dyn

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer", "Transformer", "symbolic_trace", "wrap"]


class TraceError(ValueError):
    pass


# ---- nodes and graphs ----

def _map_arg(a, fn):
    if isinstance(a, tuple):
        return tuple(_map_arg(x, fn) for x in a)
    if isinstance(a, list):
        return [_map_arg(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: _map_arg(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(_map_arg(a.start, fn), _map_arg(a.stop, fn), _map_arg(a.step, fn))
    return fn(a) if isinstance(a, Node) else a


def _nodes_in(a):
    out = []
    _map_arg(a, lambda n: out.append(n) or n)
    return out


class Node:
    def __init__(self, graph, name, op, target, args, kwargs):
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self._args, self._kwargs = (), {}
        self.users = {}
        self.meta = {}
        self._update(tuple(args), dict(kwargs))

    def _update(self, args, kwargs):
        for n in self.all_input_nodes:
            n.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        for n in self.all_input_nodes:
            n.users.setdefault(self, None)

    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, value):
        self._update(tuple(value), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self._update(self._args, dict(value))

    @property
    def all_input_nodes(self):
        seen = []
        for n in _nodes_in(self._args) + _nodes_in(self._kwargs):
            if n not in seen:
                seen.append(n)
        return seen

    @property
    def next(self):
        i = self.graph._nodes.index(self)
        return self.graph._nodes[i + 1] if i + 1 < len(self.graph._nodes) else self.graph._root

    @property
    def prev(self):
        i = self.graph._nodes.index(self)
        return self.graph._nodes[i - 1] if i > 0 else self.graph._root

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        users = list(self.users)
        for u in users:
            if not delete_user_cb(u):
                continue
            u._update(_map_arg(u._args, lambda n: replace_with if n is self else n),
                      _map_arg(u._kwargs, lambda n: replace_with if n is self else n))
        return users

    def replace_input_with(self, old, new):
        self._update(_map_arg(self._args, lambda n: new if n is old else n),
                     _map_arg(self._kwargs, lambda n: new if n is old else n))

    def format_node(self):
        if self.op == "placeholder":
            default = f"(default={self._args[0]})" if self._args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = placeholder[target={self.target}]{default}"
        if self.op == "output":
            return f"return {_fmt(self._args[0]).replace('%', '')}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = get_attr[target={self.target}]"
        target = _target_name(self.target) if self.op == "call_function" else self.target
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target}](args = "
                f"{_fmt(self._args)}, kwargs = {_fmt(self._kwargs)})")

    def __repr__(self):
        return self.name


def _fmt(a):
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, tuple):
        return "(" + ", ".join(_fmt(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(_fmt(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in a.items()) + "}"
    return repr(a)


def _target_name(t):
    if isinstance(t, str):
        return t
    mod = getattr(t, "__module__", None) or ""
    name = getattr(t, "__name__", repr(t))
    if t in _OPERATORS or mod == "_operator":
        return f"operator.{name}"
    if mod.startswith(("dyn", "_dyn")) or getattr(dyn, name, None) is t:
        return f"torch.{name}"
    return f"{mod}.{name}" if mod else name


def _snake(name):
    name = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", name) or "_"  # underscores kept, as torch.fx's (relu_, _private)
    return "_" + name if name[0].isdigit() else name


class _NodeList:
    def __init__(self, graph, reverse=False):
        self.graph, self.reverse = graph, reverse

    def __iter__(self):
        # A snapshot: a loop may insert and erase nodes as it goes (as with torch.fx's list)
        nodes = list(self.graph._nodes)
        return iter(reversed(nodes) if self.reverse else nodes)

    def __reversed__(self):
        return iter(_NodeList(self.graph, not self.reverse))

    def __len__(self):
        return len(self.graph._nodes)


class Graph:
    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._nodes = []
        self._names = {}
        self._insert = None  # (node, after) or None: append
        self._root = Node(self, "root", "root", "", (), {})
        self.owning_module = owning_module

    @property
    def nodes(self):
        return _NodeList(self)

    def _unique(self, candidate):
        base = _snake(candidate)
        if keyword.iskeyword(base) or base in dir(builtins):
            self._names.setdefault(base, 0)  # a builtin's name is taken: sum becomes sum_1, as torch.fx's
        if base not in self._names:
            self._names[base] = 0
            return base
        while True:
            self._names[base] += 1
            name = f"{base}_{self._names[base]}"
            if name not in self._names:
                self._names[name] = 0
                return name

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        if op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root"):
            raise AssertionError(f"unknown op {op}")
        if name is None:
            name = "output" if op == "output" else target if isinstance(target, str) else \
                getattr(target, "__name__", "node")
        n = Node(self, self._unique(name.replace(".", "_")), op, target, args or (), kwargs or {})
        if self._insert is None:
            self._nodes.append(n)
        else:
            at, after = self._insert
            i = self._nodes.index(at) + (1 if after else 0) if at is not self._root else (0 if after else
                                                                                          len(self._nodes))
            self._nodes.insert(i, n)
            if after:
                self._insert = (n, True)
        return n

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        n = self.create_node("placeholder", name, (), {}, name=name)
        if default_value is not inspect.Signature.empty:
            n._args = (default_value,)
        return n

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, (), {}, name=qualified_name)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), {})

    @contextlib.contextmanager
    def inserting_after(self, n=None):
        saved = self._insert
        self._insert = (n if n is not None else self._root, True)
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_before(self, n=None):
        saved = self._insert
        self._insert = (n if n is not None else self._root, False)
        try:
            yield
        finally:
            self._insert = saved

    def erase_node(self, to_erase):
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in "
                               f"the graph: {to_erase.users}!")
        to_erase._update((), {})
        self._nodes.remove(to_erase)

    def node_copy(self, node, arg_transform=lambda x: x):
        return self.create_node(node.op, node.target, _map_arg(node.args, arg_transform),
                                _map_arg(node.kwargs, arg_transform), name=node.name)

    def lint(self):
        seen = set()
        for n in self._nodes:
            if n.graph is not self:
                raise RuntimeError(f"Node {n} does not belong to this Graph")
            for a in n.all_input_nodes:
                if a.graph is not self or a not in self._nodes:
                    raise RuntimeError(f"Argument '{a}' of Node '{n}' was used before it has been defined! Please "
                                       "check that Nodes in the graph are topologically ordered")
                if a not in seen:
                    raise RuntimeError(f"Argument '{a}' of Node '{n}' was used before it has been defined! Please "
                                       "check that Nodes in the graph are topologically ordered")
            seen.add(n)

    def eliminate_dead_code(self):
        changed = False
        for n in reversed(list(self._nodes)):
            if n.op not in ("placeholder", "output") and not n.users and n.op != "call_module":
                self.erase_node(n)
                changed = True
        return changed

    def print_tabular(self):
        rows = [(n.op, n.name, _target_name(n.target) if n.op == "call_function" else str(n.target),
                 _fmt(n.args), _fmt(n.kwargs)) for n in self._nodes]
        head = ("opcode", "name", "target", "args", "kwargs")
        widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(5)]
        line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
        print(line)
        print("  ".join("-" * w for w in widths))
        for r in rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))

    def __str__(self):
        return "\n".join(["graph():"] + ["    " + n.format_node() for n in self._nodes])

    # ---- code generation ----

    def python_code(self, root_module="self"):
        return _codegen(self, root_module)


_OPERATORS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
              operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
              operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
              operator.rshift: ">>", operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=",
              operator.gt: ">", operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


class _Code:
    def __init__(self, src, globals_):
        self.src, self.globals = src, globals_


def _codegen(graph, root="self"):
    globals_ = {"torch": dyn, "operator": operator, "getattr": getattr}
    counter = [0]

    def ref(target):
        name = getattr(target, "__name__", None)
        if name and getattr(dyn, name, None) is target:
            return f"torch.{name}"
        if name and getattr(dyn.nn.functional, name, None) is target:
            return f"torch.nn.functional.{name}"
        if target in _OPERATORS or target in _UNARY or getattr(operator, name or "", None) is target:
            return f"operator.{name}"
        if name and getattr(builtins, name, None) is target:
            return name
        key = f"_fx_fn_{counter[0]}_{_snake(name or 'fn')}"
        counter[0] += 1
        globals_[key] = target
        return key

    def arg(a):
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple):
            return "(" + ", ".join(arg(x) for x in a) + ("," if len(a) == 1 else "") + ")"
        if isinstance(a, list):
            return "[" + ", ".join(arg(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({arg(a.start)}, {arg(a.stop)}, {arg(a.step)})"
        if isinstance(a, dyn.dtype):
            return f"torch.{str(a).split('.')[-1]}"
        if isinstance(a, float) and a != a or a in (float("inf"), -float("inf")):
            return f"float({str(a)!r})"
        return repr(a)

    def call(args, kwargs):
        parts = [arg(a) for a in args] + [f"{k} = {arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    last_use = {}
    for n in graph._nodes:
        for a in n.all_input_nodes:
            last_use[a] = n
    frees = {}
    for a, n in last_use.items():
        frees.setdefault(n, []).append(a.name)
    params = []
    body = []
    for n in graph._nodes:
        if n.op == "placeholder":
            params.append(n.name if not n.args else f"{n.name} = {arg(n.args[0])}")
            continue
        if n.op == "output":
            body.append(f"return {arg(n.args[0])}")
            continue
        if n.op == "call_function":
            t = n.target
            if t in _OPERATORS and len(n.args) == 2 and not n.kwargs:
                expr = f"{arg(n.args[0])} {_OPERATORS[t]} {arg(n.args[1])}"
            elif t in _UNARY and len(n.args) == 1 and not n.kwargs:
                expr = f"{_UNARY[t]}{arg(n.args[0])}"
            elif t is operator.getitem and not n.kwargs:
                expr = f"{arg(n.args[0])}[{arg(n.args[1])}]"
            elif t is getattr and not n.kwargs:
                expr = f"{arg(n.args[0])}.{n.args[1]}"
            else:
                expr = f"{ref(t)}({call(n.args, n.kwargs)})"
        elif n.op == "call_method":
            expr = f"{arg(n.args[0])}.{n.target}({call(n.args[1:], n.kwargs)})"
        elif n.op == "call_module":
            expr = f"{_attr_path(root, n.target)}({call(n.args, n.kwargs)})"
        elif n.op == "get_attr":
            expr = _attr_path(root, n.target)
        else:
            raise RuntimeError(f"codegen: unknown op {n.op}")
        line = f"{n.name} = {expr}"
        if n in frees:
            line += ";  " + " = ".join(frees[n]) + " = None"
        body.append(line)
    src = f"\n\n\ndef forward({', '.join([root] + params)}):\n" + "\n".join("    " + b for b in body) + "\n    "
    return _Code(src, globals_)


def _attr_path(root, target):
    path = root
    for part in target.split("."):
        path += f".{part}" if part.isidentifier() else f"[{part}]" if part.isdigit() else f".{part}"
    return path


# ---- GraphModule ----

class GraphModule(dyn.nn.Module):
    """A module whose forward is the Python code generated from `graph`; the submodules, parameters
    and buffers the graph names are copied from `root` (a module, or a dict of them)."""

    def __init__(self, root, graph, class_name="GraphModule"):
        # each instance its own class, named as the traced module (as torch.fx's)
        self.__class__ = type(class_name, (GraphModule,), {})
        super().__init__()
        for n in graph._nodes:
            if n.op in ("call_module", "get_attr"):
                value = root[n.target] if isinstance(root, dict) else _fetch(root, n.target)
                _put(self, n.target, value)
        if isinstance(root, dyn.nn.Module) and hasattr(root, "training"):
            self.training = root.training
        self.graph = graph
        self.recompile()

    def recompile(self):
        code = self.graph.python_code("self")
        self._code = code.src
        namespace = dict(code.globals)
        exec(compile(code.src, "<eval_with_key>", "exec"), namespace)
        object.__setattr__(self, "_forward_fn", namespace["forward"])
        return code

    @property
    def code(self):
        return self._code

    def forward(self, *args, **kwargs):
        return self._forward_fn(self, *args, **kwargs)

    def print_readable(self, print_output=True):
        s = f"class {type(self).__name__}(torch.nn.Module):{self._code.replace(chr(10), chr(10) + '    ')}"
        if print_output:
            print(s)
        return s


def _fetch(root, target):
    obj = root
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _put(module, target, value):
    *path, last = target.split(".")
    for part in path:
        if not hasattr(module, part):
            module.add_module(part, dyn.nn.Module())
        module = getattr(module, part)
    if isinstance(value, dyn.nn.Module):
        module.add_module(last, value)
    elif isinstance(value, dyn.nn.Parameter):
        module.register_parameter(last, value)
    elif isinstance(value, dyn.Tensor):
        module.register_buffer(last, value)
    else:
        setattr(module, last, value)


from ._symbolic_trace import Proxy, Tracer, symbolic_trace, wrap  # noqa: E402,F401  (tracing builds on the above)
from .interpreter import Interpreter, Transformer  # noqa: E402,F401
