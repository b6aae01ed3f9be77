"""dyn.compile: compile regions. Calls run the function with ops recorded lazily into graphs."""
import functools
import weakref
import warnings
import inspect
import os
import sys
import time

import _dyn

from . import _lift

_BACKENDS = ("default", "eager")
# id(CompiledFunction) -> its lifted entries (dyn/_lift/), newest first. Not an attribute: a lift
# holds what its guards compare with (the function's globals, modules), which often hold the
# compiled function; through an attribute that is a cycle, and a dropped compiled function would
# live until the garbage collector runs (its name, its graphs and its module with it).
_LIFTS = {}
_names_in_use = {}


def _unique_name(base):
    """Graph ids name functions; two compiled functions never share a name."""
    n = _names_in_use.get(base, 0) + 1
    _names_in_use[base] = n
    return base if n == 1 else f"{base}#{n}"


# (code object, call site) -> how many compiled functions were made there: the same function
# compiled again and again at one line is being re-created (dyn.compile in a loop).
_definitions = {}
_package_dir = __file__.rsplit("/", 1)[0] + "/"


def _short(where):
    """'/long/path/a.py:12' -> 'a.py:12', as the views print places."""
    return where.rsplit("/", 1)[-1]


def _caller_site():
    """file:line of the user code that called dyn.compile."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_package_dir):
        f = f.f_back
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else ""


# Called by forget_definitions: what else forgets its compiled state at a reset (dyn._real_torch:
# Dynamo's caches, so that a reset leaves no entry the views no longer list).
RESET_HOOKS = []


def forget_definitions():
    """After a reset, names start afresh: a re-run script's f is f[0] again, not f#2 (unless the
    old f is still alive: two live compiled functions never share a name, or their graph ids would)."""
    for hook in RESET_HOOKS:
        hook()
    _definitions.clear()
    _names_in_use.clear()
    for lifts in _LIFTS.values():  # the entries they served are gone
        lifts.clear()
    for _, c in _live():
        c._analyzed.clear()
        c._why_python.clear()
        c._lift_budget = c.cache_limit + 4
    for _, c in _live():
        base, sep, n = c.name.rpartition("#")
        if not sep or not base or not n.isdigit():
            base, n = c.name, "1"
        _names_in_use[base] = max(_names_in_use.get(base, 0), int(n))


class CompiledFunction:
    """A function (or nn.Module) compiled with dyn.compile. Call it like the original."""

    def __init__(self, fn, *, fullgraph, cache_limit, backend, name, dynamic=None, lift=None, verify=False,
                 _count=True):
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
        site = _caller_site()
        key = (getattr(target, "__code__", None), site)
        recreated = _definitions.get(key, 0) if _count and key[0] is not None else 0
        if _count and key[0] is not None:
            _definitions[key] = recreated + 1
        self._state = _dyn._compiled_state(_unique_name(name), fullgraph, cache_limit, backend, recreated, site,
                                           dynamic)
        try:
            params = inspect.signature(target).parameters.values()
            self._arg_names = tuple(
                p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            )
        except (TypeError, ValueError):
            self._arg_names = ()
        self.fullgraph = fullgraph
        self.cache_limit = cache_limit
        if lift is not None and not isinstance(lift, bool) or not isinstance(verify, bool):
            raise TypeError("dyn.compile: lift must be None or a bool, verify a bool")
        # Tier 2 (trace once, dyn/_lift/): entries served without running the body; lift=False or
        # DYN_LIFT=0 keeps tier 1 only (the lazy baseline).
        env = os.environ.get("DYN_LIFT", "")
        self._verify = verify or os.environ.get("DYN_VERIFY_LIFT", "0") not in ("", "0")
        self._lift_on = env != "0" and (lift if lift is not None else True)
        _LIFTS[id(self)] = []  # newest first; kept outside self (see _LIFTS)
        weakref.finalize(self, _LIFTS.pop, id(self), None)
        self._why_python = {}  # entry -> (reason, where): why it stays on tier 1
        self._lift_budget = cache_limit + 4  # traced calls that may end without a new lift
        self._lift_seconds = 0.0
        _dyn._lift_note(self._state, -1, False, [], "", "", 0.0, self._lift_on)
        self._verified = 0
        self._verifying = False
        self._analyzed = set()  # entries the analysis ran for (lifted, or why not)
        self._root = self._module if self._module is not None else self._fn  # what a lifted call's M is
        self.backend = backend
        self.dynamic = dynamic
        if self._module is None:
            functools.update_wrapper(self, target)
        if _count:  # explain()'s private compile must not take over lookups of the original
            _register(target, self)
            if self._module is not None:
                _register(self._module, self)
        self._ready = True

    @property
    def name(self):
        """This function's name in graph ids (fn[entry].segment)."""
        return self._state.name

    def __call__(self, *args, **kwargs):
        lifts = _LIFTS.get(id(self))
        if lifts and not self._verifying and not _dyn._capture_active():
            verify = self._verify
            root = self._root
            for lift in lifts:
                if verify:
                    state = _lift.State.before(lift, args, kwargs, root)
                    try:
                        r = lift.fn(args, kwargs, False, root)
                    except Exception as e:  # the body must raise it too
                        if state is not None:
                            state.restore()
                        return self._verify_raised(lift, e, args, kwargs)
                    if r is not _lift._MISS and state is not None:
                        state.after()  # what the lifted call left; then the body runs from the state before
                else:
                    r = lift.fn(args, kwargs, True, root)
                if r is not _lift._MISS:
                    if verify:  # the body serves the call, as it would without lifting; r is compared
                        return self._verify_hit(lift, r, args, kwargs, state)
                    lift.hits += 1
                    return r
            misses = [(lift.entry, _lift.describe_miss(lift)) for lift in lifts]
        else:
            misses = None
        # The analysis (a traced call costs what running the body under a trace function does) runs
        # on a call likely to replay an entry it has not run for (the entry the last call ended
        # in), or when a lifted entry's Python guard just failed (another path through the body).
        # A call that records a new entry is analyzed at the next call, which replays it.
        trace = False
        if self._lift_on and self._lift_budget > 0 and not self._verifying:
            last = _dyn._last_entry(self._state)
            trace = (last >= 0 and last not in self._analyzed) or (misses is not None and any(
                m is not None and not m.startswith("the engine") for _, m in misses))
        # A module is called as a module, so its forward hooks run inside the region too.
        run = self._module if self._module is not None else self._fn
        # Names of what enters the graph are looked up only when a call records (dyn/_sources.py).
        outer = _dyn._capture_active()
        tracer = None
        try:
            if not _dyn._region_begin(self._state, args, kwargs, self):
                # Inside another region (inlined into its trace), or fallen back to eager.
                return run(*args, **kwargs)
            if trace:
                t0 = time.perf_counter()
                tracer = _lift.Tracer()
                tracer.start(run, args, kwargs)
                try:
                    result = run(*args, **kwargs)
                finally:
                    tracer.finish()
                snapshot = outs = None
                if tracer.refused is None:
                    outs = _lift.result_tensors(result)
                    tracer.add_effects(outs)
                    snapshot = _dyn._lift_snapshot(outs, [t for t, _ in tracer.tensor_srcs.values()])
                seconds = time.perf_counter() - t0
            else:
                result = run(*args, **kwargs)
            _dyn._region_end()
        except BaseException:
            # CPython raises a pending Ctrl-C as soon as a C function returns: right after
            # _region_begin entered the region, before its True is seen, too. With no region open
            # before this call, one open now is this call's; _region_abort closes it (or does
            # nothing), in one call, so that a second Ctrl-C cannot land between a check and it.
            if not outer:
                _dyn._region_abort()
            raise
        if tracer is not None:
            self._after_trace(tracer, result, outs, snapshot, seconds)
        if misses:  # why each lifted entry did not serve this call, for :why-python
            for entry, miss in misses:
                if miss is not None:
                    _dyn._lift_miss(self._state, entry, miss)
        return result

    def _after_trace(self, tracer, result, outs, snapshot, seconds):
        # Each analysis costs a traced call: a function whose lifts keep missing stops being analyzed.
        self._lift_budget -= 1
        entry = _dyn._last_entry(self._state)
        t0 = time.perf_counter()
        try:
            if tracer.refused is not None:  # not raised: its traceback would hold this frame, and self
                if entry >= 0:
                    self._note_refusal(entry, tracer.refused.reason, tracer.refused.where)
                return
            if entry < 0:
                raise _lift.Refused("the call was not served by a cache entry")
            lift = _lift.make_lift(self, tracer, result, outs, snapshot, seconds)
        except _lift.Refused as r:
            if entry >= 0:
                self._note_refusal(entry, r.reason, r.where)
            return
        finally:
            tracer.tensor_srcs.clear()
            dt = seconds + time.perf_counter() - t0
            self._lift_seconds += dt
            _dyn._lift_note(self._state, -1, False, [], "", "", dt, True)
        self._why_python.pop(entry, None)
        self._analyzed.add(entry)
        lift.seconds += time.perf_counter() - t0
        _dyn._lift_note(self._state, entry, True, [f"{t}  # {_short(w)}" if w else t for t, w in lift.guard_lines()],
                        "", "", 0.0, True)
        lifts = _LIFTS[id(self)]
        lifts.insert(0, lift)
        del lifts[8:]

    def _note_refusal(self, entry, reason, where):
        self._analyzed.add(entry)
        if any(lift.entry == entry for lift in self._lifts):
            return  # another path through the same trace is lifted; this one keeps Python running
        self._why_python[entry] = (reason, where)
        _dyn._lift_note(self._state, entry, False, [], reason, where, 0.0, True)

    def _verify_raised(self, lift, e, args, kwargs):
        self._verifying = True
        try:
            expected = self(*args, **kwargs)
        except Exception as body_e:
            if type(body_e) is not type(e):
                raise LiftMismatch(f"dyn.compile(verify=True): '{self.name}' entry {lift.entry} served without its "
                                   f"body raised {type(e).__name__}: {e}; the body raises {type(body_e).__name__}: "
                                   f"{body_e}") from body_e
            self._verified += 1
            lift.verified += 1
            raise
        finally:
            self._verifying = False
        raise LiftMismatch(f"dyn.compile(verify=True): '{self.name}' entry {lift.entry} served without its body "
                           f"raised {type(e).__name__}: {e}; the body returns") from e

    def _verify_hit(self, lift, r, args, kwargs, state=None):
        """verify=True: the call runs on tier 1 too, and both results must be the same, bit for bit:
        the result, and the tensors and .grad attributes the call writes."""
        self._verifying = True
        try:
            expected = self(*args, **kwargs)
        finally:
            self._verifying = False
        problem = _lift.compare(r, expected) or (state.compare() if state is not None else "")
        self._verified += 1
        lift.verified += 1
        if problem:
            raise LiftMismatch(f"dyn.compile(verify=True): '{self.name}' entry {lift.entry} served without its body "
                               f"gave {problem}; the body gives otherwise. The lifted guards were:\n  " +
                               "\n  ".join(t for t, _ in lift.guard_lines()))
        return expected

    @property
    def _lifts(self):
        return _LIFTS.get(id(self), [])

    def why_python(self):
        """For each cache entry left on tier 1 (the body runs at each call): (entry, reason, where)."""
        return [(e, r, w) for e, (r, w) in sorted(self._why_python.items())]

    # A compiled module behaves like the module (PyTorch's OptimizedModule): its attributes,
    # parameters, state_dict, train()/eval() are the original's.
    def __getattr__(self, name):
        module = self.__dict__.get("_module")
        if module is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(module, name)

    def __setattr__(self, name, value):
        module = self.__dict__.get("_module")
        if module is not None and self.__dict__.get("_ready") and name not in self.__dict__ and hasattr(module, name):
            setattr(module, name, value)
        else:
            object.__setattr__(self, name, value)

    @property
    def _orig_mod(self):
        return self._module if self._module is not None else self.__wrapped__

    # PyTorch's OptimizedModule holds the module as its submodule _orig_mod: names of parameters,
    # buffers and submodules, and state_dict keys, start with "_orig_mod." (a checkpoint of a
    # compiled module has them; loading one needs them).
    _PREFIX = "_orig_mod."

    def _prefixed(self, items):
        return ((self._PREFIX + name, value) for name, value in items)

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        module = self._need_module("state_dict")
        return module.state_dict(destination=destination, prefix=prefix + self._PREFIX, keep_vars=keep_vars)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        module = self._need_module("load_state_dict")
        own = {}
        unexpected = []
        for k, v in state_dict.items():
            if k.startswith(self._PREFIX):
                own[k[len(self._PREFIX):]] = v
            else:
                unexpected.append(k)
        if unexpected and strict:
            missing = [self._PREFIX + k for k in module.state_dict() if k not in own]
            msg = f"Error(s) in loading state_dict for {type(self).__name__}:"
            if missing:
                msg += "\n\tMissing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". "
            msg += "\n\tUnexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". "
            raise RuntimeError(msg + "\n\t(a compiled module's keys start with '_orig_mod.'; load into the "
                                     "module itself, ._orig_mod, for keys without it)")
        return module.load_state_dict(own, strict=strict)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._need_module("named_parameters").named_parameters(prefix + self._PREFIX.rstrip("."), recurse,
                                                                      remove_duplicate)

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._need_module("named_buffers").named_buffers(prefix + self._PREFIX.rstrip("."), recurse,
                                                                remove_duplicate)

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        yield prefix, self
        yield from self._need_module("named_modules").named_modules(memo, prefix + self._PREFIX.rstrip("."),
                                                                    remove_duplicate)

    def named_children(self):
        yield self._PREFIX.rstrip("."), self._need_module("named_children")

    def children(self):
        yield self._need_module("children")

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def _need_module(self, what):
        if self._module is None:
            raise AttributeError(f"{what}: a compiled function has none (only a compiled nn.Module has)")
        return self._module

    def __get__(self, obj, objtype=None):
        # A compiled method stays a method.
        return self if obj is None else functools.partial(self.__call__, obj)

    def __repr__(self):
        if self._module is not None:  # PyTorch's OptimizedModule's repr
            inner = repr(self._module).replace("\n", "\n  ")
            return f"OptimizedModule(\n  (_orig_mod): {inner}\n)"
        return f"<dyn.compile {self.name} backend={self.backend!r} fullgraph={self.fullgraph}>"


# id(original function or module) -> (weak reference to it, weak reference to its CompiledFunction).
# Weak both ways: the registry must keep neither alive (a compiled closure holds its cells, a module
# its parameters), and an id reused by a new object after the original died must not find the old
# compiled function. The engine keeps the graphs and events of a freed function for :graph and the
# report; only the Python lookup forgets it.
_registry = {}


def _register(original, compiled):
    key = id(original)

    def forget(_ref, key=key):
        entry = _registry.get(key)
        if entry is not None and (entry[0]() is None or entry[1]() is None):
            del _registry[key]

    try:
        _registry[key] = (weakref.ref(original, forget), weakref.ref(compiled, forget))
    except TypeError:  # an object without weak references (a builtin): kept for the process's life
        _registry[key] = ((lambda o: lambda: o)(original), (lambda c: lambda: c)(compiled))


def _live():
    for original, compiled in list(_registry.values()):
        c = compiled()
        if c is not None and original() is not None:
            yield original(), c


def lookup(fn):
    """The CompiledFunction for a compiled function, its original function, its module, or its name."""
    if isinstance(fn, CompiledFunction):
        return fn
    if isinstance(fn, str):
        for _, c in _live():
            if c.name == fn:
                return c
        return None
    entry = _registry.get(id(fn))
    if entry is None or entry[0]() is not fn:
        return None
    return entry[1]()


# PyTorch's and torch_xla's backend names: each runs dyn's own compiled path.
_TORCH_BACKENDS = ("inductor", "openxla", "openxla_eval", "torchxla_trace_once", "aot_torchxla_trace_once",
                   "aot_eager", "cudagraphs", "onnxrt", "tvm", "ipex")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_warned = set()


def _warn_once(msg):
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(msg, stacklevel=3)


class LiftMismatch(RuntimeError):
    """verify=True found a call whose lifted result differs from the body's: a bug in dyn."""


class InvalidBackend(RuntimeError):
    """An unknown backend= name, raised by dyn.compile / torch.compile before anything is compiled
    (as torch._dynamo.exc.InvalidBackend)."""

    def __init__(self, name):
        self.name = name
        super().__init__(f"Invalid backend: {name!r}. See `torch._dynamo.list_backends()` for available backends: "
                         f"{', '.join(list_backends())}; nothing was compiled")


def list_backends():
    """The backend names dyn.compile takes: dyn's own and PyTorch's / torch_xla's (which run dyn's
    default backend)."""
    return list(_BACKENDS + _TORCH_BACKENDS)


def _torch_backend(backend):
    """dyn's backend for a name given to torch.compile/dyn.compile; an unknown name raises
    InvalidBackend, as torch.compile does."""
    if callable(backend) and not isinstance(backend, str):
        _warn_once(f"dyn.compile: custom backend {getattr(backend, '__name__', backend)!r} is not called; "
                   "dyn compiles with its own backend")
        return "default"
    if backend in _BACKENDS:
        return backend
    if backend is None or backend in _TORCH_BACKENDS:  # torch.compile(backend=None) is its default
        return "default"
    raise InvalidBackend(backend)


def compile(fn=None, *, fullgraph=False, dynamic=None, cache_limit=8, backend="default", mode=None, options=None,
            disable=False, name=None, lift=None, verify=False):
    """Compile fn: calls trace its ops lazily into graphs, cut at graph breaks, and run them.

    Use as @dyn.compile, @dyn.compile(fullgraph=True) or dyn.compile(fn) / dyn.compile(module).
    torch.compile's arguments are accepted: backend names of PyTorch and torch_xla ('inductor',
    'openxla', ...) use dyn's backend; mode and options are noted, not tuned for; disable=True
    returns fn itself.

    lift=True (or DYN_LIFT=1) serves cache entries without running the body (tier 2, trace
    once) where a one-time analysis of the body shows that is exact; why_python() says why an
    entry stays on tier 1. verify=True (or DYN_VERIFY_LIFT=1) runs the body too and raises
    LiftMismatch if the results differ.
    """
    backend = _torch_backend(backend)
    if mode not in _MODES:
        _warn_once(f"dyn.compile: unknown mode {mode!r}; ignored (known: {', '.join(m for m in _MODES if m)})")
    if options:
        _warn_once(f"dyn.compile: options {sorted(options)} are ignored by dyn")
    if dynamic is not None and not isinstance(dynamic, bool):
        raise TypeError(f"dyn.compile: dynamic must be None, True or False, got {dynamic!r}")

    def make(f):
        if disable:
            return f
        return CompiledFunction(f, fullgraph=fullgraph, cache_limit=cache_limit, backend=backend, name=name,
                                dynamic=dynamic, lift=lift, verify=verify)

    return make if fn is None else make(fn)


def _dims_of(fn, t, index):
    if not isinstance(t, _dyn.Tensor):
        raise TypeError(f"dyn.{fn}: expected a dyn tensor, got {type(t).__name__}")
    if t.dim() == 0:
        raise IndexError(f"dyn.{fn}: a 0-d tensor has no dims to mark")
    dims = list(index) if isinstance(index, (list, tuple, set)) else [index]
    out = []
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"dyn.{fn}: dim must be an int (or a list of ints), got {d!r}")
        if not -t.dim() <= d < t.dim():
            raise IndexError(f"dyn.{fn}: dim {d} is out of range for a tensor of shape {list(t.shape)} "
                             f"(expected a dim in [{-t.dim()}, {t.dim() - 1}])")
        out.append(d % t.dim())
    return out


def mark_dynamic(t, index, *, min=None, max=None, _fn="mark_dynamic"):
    """Mark dim(s) `index` of t dynamic: a compiled call that t enters keeps them symbolic (s0, ...)
    from its first trace, so other sizes reuse the graph (no recompile). As in PyTorch, sizes 0
    and 1 stay specialized. min and max are accepted and not enforced."""
    for d in _dims_of(_fn, t, index):
        if t.shape[d] < 2:
            _warn_once(f"dyn.{_fn}: dim {d} of a tensor of shape {list(t.shape)} has size {t.shape[d]}; "
                       "sizes 0 and 1 stay specialized (as in PyTorch), so it is not dynamic in this call")
        _dyn._mark_dynamic(t, d, True)


def maybe_mark_dynamic(t, index):
    """Like mark_dynamic (dyn never raises for a dim that stays specialized)."""
    mark_dynamic(t, index, _fn="maybe_mark_dynamic")


def mark_static(t, index=None):
    """Undo mark_dynamic for dim(s) `index` (every dim when None)."""
    dims = range(t.dim()) if index is None else _dims_of("mark_static", t, index)
    for d in dims:
        _dyn._mark_dynamic(t, d, False)
