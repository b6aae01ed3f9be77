"""dyn.compile: compile regions. Calls run the function with ops recorded lazily into graphs."""
import functools
import inspect

import _dyn

_BACKENDS = ("default", "eager")
_names_in_use = {}


def _unique_name(base):
    """Graph ids name functions; two compiled functions never share a name."""
    n = _names_in_use.get(base, 0) + 1
    _names_in_use[base] = n
    return base if n == 1 else f"{base}#{n}"


def _name_tensors(obj, name, kind, depth=0):
    """Tags tensors in arguments (also inside lists, tuples and dicts) with where they came from."""
    if isinstance(obj, _dyn.Tensor):
        _dyn._name_input(obj, kind, name)
    elif depth < 2 and isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj):
            _name_tensors(x, f"{name}[{i}]", kind, depth + 1)
    elif depth < 2 and isinstance(obj, dict):
        for k, x in obj.items():
            _name_tensors(x, f"{name}[{k!r}]", kind, depth + 1)


class CompiledFunction:
    """A function (or nn.Module) compiled with dyn.compile. Call it like the original."""

    def __init__(self, fn, *, fullgraph, cache_limit, backend, name):
        from . import nn

        if isinstance(fn, CompiledFunction):
            fn = fn.__wrapped__
        self._module = fn if isinstance(fn, nn.Module) else None
        target = fn.forward if self._module is not None else fn
        if not callable(target):
            raise TypeError(f"dyn.compile expects a function or an nn.Module, got {type(fn).__name__}")
        if inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target):
            raise TypeError(
                f"dyn.compile cannot compile generator function {getattr(target, '__qualname__', target)!r}: "
                "its body runs after the call returns; compile the function that consumes it instead"
            )
        if inspect.iscoroutinefunction(target):
            raise TypeError("dyn.compile cannot compile async functions")
        if not isinstance(fullgraph, bool):
            raise TypeError(f"dyn.compile: fullgraph must be a bool, got {type(fullgraph).__name__}")
        if not isinstance(cache_limit, int) or isinstance(cache_limit, bool) or cache_limit < 1:
            raise ValueError(f"dyn.compile: cache_limit must be a positive int, got {cache_limit!r}")
        if backend not in _BACKENDS:
            raise ValueError(f"dyn.compile: unknown backend {backend!r}; expected one of {', '.join(_BACKENDS)}")
        if name is None:
            name = type(fn).__name__ if self._module is not None else getattr(target, "__name__", "fn")
        if not isinstance(name, str) or not name:
            raise TypeError("dyn.compile: name must be a non-empty str")
        self.__wrapped__ = fn
        self._fn = target
        self._state = _dyn._compiled_state(_unique_name(name), fullgraph, cache_limit, backend)
        self.fullgraph = fullgraph
        self.cache_limit = cache_limit
        self.backend = backend
        if self._module is None:
            functools.update_wrapper(self, target)
        _registry[id(target)] = self
        if self._module is not None:
            _registry[id(self._module)] = self

    @property
    def name(self):
        """This function's name in graph ids (fn[entry].segment)."""
        return self._state.name

    def __call__(self, *args, **kwargs):
        if not _dyn._region_begin(self._state):
            return self._fn(*args, **kwargs)  # inside another region: inlined into its trace
        try:
            params = inspect.signature(self._fn).parameters if args or kwargs else {}
            names = list(params)
            for i, a in enumerate(args):
                _name_tensors(a, names[i] if i < len(names) else f"args[{i}]", "argument")
            for k, a in kwargs.items():
                _name_tensors(a, k, "argument")
            if self._module is not None:
                for pname, p in self._module.named_parameters():
                    _dyn._name_input(p, "parameter", pname)
            result = self._fn(*args, **kwargs)
        except BaseException:
            _dyn._region_abort()
            raise
        _dyn._region_end()
        return result

    def __get__(self, obj, objtype=None):
        # A compiled method stays a method.
        return self if obj is None else functools.partial(self.__call__, obj)

    def __repr__(self):
        return f"<dyn.compile {self.name} backend={self.backend!r} fullgraph={self.fullgraph}>"


_registry = {}


def lookup(fn):
    """The CompiledFunction for a compiled function, its original function, its module, or its name."""
    if isinstance(fn, CompiledFunction):
        return fn
    if isinstance(fn, str):
        for c in _registry.values():
            if c.name == fn:
                return c
        return None
    return _registry.get(id(fn))


def compile(fn=None, *, fullgraph=False, cache_limit=8, backend="default", name=None):
    """Compile fn: calls trace its ops lazily into graphs, cut at graph breaks, and run them.

    Use as @dyn.compile, @dyn.compile(fullgraph=True) or dyn.compile(fn) / dyn.compile(module).
    """
    if fn is None:
        return lambda f: CompiledFunction(f, fullgraph=fullgraph, cache_limit=cache_limit, backend=backend, name=name)
    return CompiledFunction(fn, fullgraph=fullgraph, cache_limit=cache_limit, backend=backend, name=name)
