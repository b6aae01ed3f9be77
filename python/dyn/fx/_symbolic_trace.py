"""torch.fx's symbolic tracing (torch/fx/_symbolic_trace.py and proxy.py in PyTorch): Proxy, the
values being traced; Tracer, which runs a function or module on Proxies and records what is done
to them; wrap, and symbolic_trace."""
import contextlib
import inspect
import operator

import dyn

from . import Graph, GraphModule, TraceError

class Proxy:
    """A value being traced: what is done to it becomes nodes of the tracer's graph."""

    def __init__(self, node, tracer=None):
        self.node, self.tracer = node, tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Attribute(self, name)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or "
                         "as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a more "
                         "detailed explanation of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def __getitem__(self, key):
        return self.tracer.create_proxy("call_function", operator.getitem, (self, key), {})

    def __index__(self):
        raise TraceError("symbolically traced variables cannot be used as indices")


def _binary(op, reflected=False):
    def f(self, other):
        args = (other, self) if reflected else (self, other)
        return self.tracer.create_proxy("call_function", op, args, {})
    return f


for _op, _name in ((operator.add, "add"), (operator.sub, "sub"), (operator.mul, "mul"), (operator.truediv, "truediv"),
                   (operator.floordiv, "floordiv"), (operator.mod, "mod"), (operator.pow, "pow"),
                   (operator.matmul, "matmul"), (operator.and_, "and"), (operator.or_, "or"), (operator.xor, "xor"),
                   (operator.lshift, "lshift"), (operator.rshift, "rshift")):
    setattr(Proxy, f"__{_name}__", _binary(_op))
    setattr(Proxy, f"__r{_name}__", _binary(_op, True))
for _op, _name in ((operator.eq, "eq"), (operator.ne, "ne"), (operator.lt, "lt"), (operator.le, "le"),
                   (operator.gt, "gt"), (operator.ge, "ge")):
    setattr(Proxy, f"__{_name}__", _binary(_op))
for _op, _name in ((operator.neg, "neg"), (operator.pos, "pos"), (operator.invert, "invert")):
    setattr(Proxy, f"__{_name}__", (lambda o: lambda self: self.tracer.create_proxy("call_function", o, (self,), {}))(
        _op))
Proxy.__hash__ = object.__hash__


class _Attribute(Proxy):
    def __init__(self, root, attr):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _has_proxy(args, kwargs):
    found = []

    def look(a):
        if isinstance(a, Proxy):
            found.append(a)
        elif isinstance(a, (tuple, list)):
            for x in a:
                look(x)
        elif isinstance(a, dict):
            for x in a.values():
                look(x)
    look(args)
    look(kwargs)
    return found[0].tracer if found else None


_wrapped_names = set()


def wrap(fn_or_name):
    """Marks a module-level function to be recorded as a call (not traced into) when called with a
    Proxy; dyn's own functions always are."""
    _wrapped_names.add(fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__)
    return fn_or_name


class Tracer:
    # as PyTorch's: a buffer read by attribute is its value (ops on it run, and a result that meets
    # a Proxy becomes a _tensor_constant attribute); True makes buffers get_attr nodes too
    proxy_buffer_attributes = False

    def __init__(self, autowrap_modules=(), autowrap_functions=()):
        self.graph = None
        self.root = None
        self.tensor_attrs = {}

    def _tensor_arg(self, t):
        """A concrete tensor an op of the graph reads: a get_attr of the root's parameter or buffer
        it is, else of a new _tensor_constant attribute of the root (as PyTorch's create_arg)."""
        if id(t) not in self.tensor_attrs:
            for name, v in list(self.root.named_parameters()) + list(self.root.named_buffers()):
                if v is t:
                    self.tensor_attrs[id(t)] = name
                    break
            else:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                name = f"_tensor_constant{i}"
                object.__setattr__(self.root, name, t)
                self.tensor_attrs[id(t)] = name
        name = self.tensor_attrs[id(t)]
        return self.create_node("get_attr", name, (), {}, name)

    def is_leaf_module(self, m, module_qualified_name):
        mod = type(m).__module__
        return (mod.startswith("dyn.nn") or mod.startswith("torch.nn")) and not isinstance(m, dyn.nn.Sequential)

    def create_proxy(self, kind, target, args, kwargs, name=None):
        def unwrap(a):
            if isinstance(a, Proxy):
                return a.node
            if isinstance(a, (tuple, list)):
                return type(a)(unwrap(x) for x in a)
            if isinstance(a, dict):
                return {k: unwrap(v) for k, v in a.items()}
            if isinstance(a, slice):
                return slice(unwrap(a.start), unwrap(a.stop), unwrap(a.step))
            if isinstance(a, dyn.Tensor) and kind != "output" and self.root is not None:
                return self._tensor_arg(a)
            return a
        node = self.create_node(kind, target, unwrap(tuple(args)), unwrap(dict(kwargs)), name)
        return Proxy(node, self)

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Every node the tracer makes comes through here (a subclass may tag or rewrite them)."""
        return self.graph.create_node(kind, target, args, kwargs, name=name, type_expr=type_expr)

    def path_of_module(self, mod):
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        if self.is_leaf_module(m, path):
            return self.create_proxy("call_module", path, args, kwargs)
        return forward(*args, **kwargs)

    def trace(self, root, concrete_args=None):
        self.graph = Graph()
        if isinstance(root, dyn.nn.Module):
            self.root = root
            fn = type(root).forward
            args = [root]
        else:
            self.root = dyn.nn.Module()
            fn = root
            args = []
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[len(args):]
        for p in params:
            if concrete_args and p.name in concrete_args:
                args.append(concrete_args[p.name])
            elif p.kind == p.VAR_POSITIONAL:
                raise TraceError(f"symbolic_trace: *{p.name} cannot be traced; give the arguments by name")
            else:
                default = () if p.default is inspect.Parameter.empty else (p.default,)
                args.append(Proxy(self.create_node("placeholder", p.name, default, {}, p.name), self))
        with _patched(self):
            result = fn(*args)
        self.create_proxy("output", "output", (result,), {})
        return self.graph


@contextlib.contextmanager
def _patched(tracer):
    """While tracing: dyn's functions called with a Proxy record a call_function; submodules called
    record a call_module (leaves) or trace into their forward; the root's parameters and buffers read
    by attribute become get_attr nodes."""
    saved = []

    def wrapper(fn):
        def f(*args, **kwargs):
            t = _has_proxy(args, kwargs)
            if t is not None:
                return t.create_proxy("call_function", fn, args, kwargs)
            return fn(*args, **kwargs)
        f.__name__ = getattr(fn, "__name__", "fn")
        f.__wrapped__ = fn
        return f

    for ns in (dyn, dyn.nn.functional, dyn.linalg):
        for name in dir(ns):
            if name.startswith("_"):
                continue
            v = getattr(ns, name)
            if callable(v) and not isinstance(v, type) and not inspect.ismodule(v):
                saved.append((ns, name, v))
                setattr(ns, name, wrapper(v))
    module_call = dyn.nn.Module.__call__
    module_getattr = dyn.nn.Module.__getattr__
    tensors = {}
    proxied = list(tracer.root.named_parameters())
    if tracer.proxy_buffer_attributes:
        proxied += list(tracer.root.named_buffers())
    for name, t in proxied:
        tensors[id(t)] = name

    def call(self, *args, **kwargs):
        return tracer.call_module(self, lambda *a, **k: module_call(self, *a, **k), args, kwargs)

    def getattr_(self, name):
        value = module_getattr(self, name)
        if isinstance(value, dyn.Tensor) and id(value) in tensors:
            return tracer.create_proxy("get_attr", tensors[id(value)], (), {})
        return value

    dyn.nn.Module.__call__ = call
    dyn.nn.Module.__getattr__ = getattr_
    try:
        yield
    finally:
        dyn.nn.Module.__call__ = module_call
        dyn.nn.Module.__getattr__ = module_getattr
        for ns, name, v in saved:
            setattr(ns, name, v)


def symbolic_trace(root, concrete_args=None):
    """The graph of what root (a function or nn.Module) does to its arguments, as a GraphModule."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, dyn.nn.Module) else root.__name__
    gm = GraphModule(tracer.root, graph, name)
    return gm
