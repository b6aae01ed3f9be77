"""Sources: what a compiled call can see by name, written as the user would write it.

The engine asks only while it records a trace or explains a recompile (never on a replayed call):
which name a tensor entering the graph has (`x`, `batch['ids']`, `proj_weight`, `model.fc.weight`,
`opt.state[model.fc.weight]['exp_avg']`), where a float that became a graph input came from
(`w`, `opt.param_groups[0]['lr']`), and which plain Python values the call could see, so that a
recompile can say which of them changed.
"""
import dis
import inspect
import sys
import types
import weakref

from ._frames import (_argument_holding, _call_target, _instance_dict, _is_library, _is_number,  # noqa: F401
                      _kind_of, _last_key, _literals, _operand_text, _package_dir, _root_of, _simple_access,
                      _store_target)

_MAX_ITEMS = 64  # items of one list or dict looked into
_MAX_VALUES = 256  # plain values kept for explaining a recompile

_Tensor = None
_Module = None
_Optimizer = None


def _types():
    global _Tensor, _Module, _Optimizer
    if _Tensor is None:
        import dyn
        from .nn.modules.module import Module
        from .optim import Optimizer

        _Tensor, _Module, _Optimizer = dyn.Tensor, Module, Optimizer




def _plain(v):
    return v is None or type(v) in (bool, int, float, str)


def _is(obj, cls):
    """isinstance without asking the object (a __class__ property is user code)."""
    return issubclass(type(obj), cls)




class _Walk:
    """Collects (kind, name, tensor) and (kind, name, value) from the roots given, first name wins."""

    def __init__(self):
        _types()
        self.tensors = []
        self.values = []
        self._seen = set()
        self._index = {}  # id(tensor) -> its place in tensors
        self.param_names = {}  # id(parameter) -> its name, for optimizer state keys
        self.module_names = {}  # id(module) -> its name, for the numbers a module's forward passes on

    def walk(self, obj, name, kind, depth=0):
        if _is(obj, _Tensor):
            if id(obj) not in self._seen:
                self._seen.add(id(obj))
                self._index[id(obj)] = len(self.tensors)
                self.tensors.append((kind, name, obj))
            elif kind == "argument" and id(obj) in self._index:
                # The same tensor passed twice: both names, as the call wrote them.
                i = self._index[id(obj)]
                k, n, t = self.tensors[i]
                if k == "argument":
                    self.tensors[i] = (k, f"{n} = {name}", t)
            return
        if _plain(obj):
            # An optimizer's hyperparameters are kept past the cap: a large model's attributes must
            # not crowd out the lr that a schedule changes.
            if len(self.values) < _MAX_VALUES or (kind == "optimizer_state" and len(self.values) < 4 * _MAX_VALUES):
                self.values.append((kind, name, obj))
            return
        if id(obj) in self._seen or depth > 24:
            return
        if _is(obj, _Module):
            self._seen.add(id(obj))
            self.module_names[id(obj)] = name
            self._module(obj, name, depth)
        elif _is(obj, _Optimizer):
            self._seen.add(id(obj))
            self._optimizer(obj, name)
        elif _is(obj, (list, tuple)) and depth < 3:
            # The base class's own methods: a subclass's overrides are user code.
            self._seen.add(id(obj))
            base = list if _is(obj, list) else tuple
            for i in range(min(base.__len__(obj), _MAX_ITEMS)):
                self.walk(base.__getitem__(obj, i), f"{name}[{i}]", kind, depth + 1)
        elif _is(obj, dict) and depth < 3:
            self._seen.add(id(obj))
            for i, (k, v) in enumerate(dict.items(obj)):
                if i >= _MAX_ITEMS:
                    break
                if _plain(k):
                    self.walk(v, f"{name}[{k!r}]", kind, depth + 1)
        elif depth < 2 and not _is(obj, (types.ModuleType, types.FunctionType, type, types.MethodType)):
            # A plain object (a config, a dataclass): its public attributes.
            d = _instance_dict(obj)
            if d is not None:
                self._seen.add(id(obj))
                for k, v in list(d.items())[:_MAX_ITEMS]:
                    if not k.startswith("_"):
                        self.walk(v, f"{name}.{k}", "attribute" if kind in ("argument", "local") else kind, depth + 1)

    def _module(self, m, name, depth):
        d = _instance_dict(m) or {}
        for k, p in d.get("_parameters", {}).items():
            if p is not None:
                self.param_names.setdefault(id(p), f"{name}.{k}")
                self.walk(p, f"{name}.{k}", "parameter", depth + 1)
        for k, b in d.get("_buffers", {}).items():
            if b is not None:
                self.walk(b, f"{name}.{k}", "attribute", depth + 1)
        for k, v in d.items():
            if k == "training" or not k.startswith("_"):
                if _is(v, _Tensor) or _plain(v):
                    self.walk(v, f"{name}.{k}", "attribute", depth + 1)
        for k, c in d.get("_modules", {}).items():
            if c is not None:
                self.walk(c, f"{name}[{k}]" if k.isdigit() else f"{name}.{k}", "parameter", depth + 1)

    def _optimizer(self, opt, name):
        for i, g in enumerate(opt.param_groups):
            for k, v in g.items():
                if k == "params":
                    continue
                if _is_number(v):
                    self.walk(v, f"{name}.param_groups[{i}][{k!r}]", "optimizer_state")
                elif type(v) is tuple and all(_is_number(x) for x in v):
                    for j, x in enumerate(v):
                        self.walk(x, f"{name}.param_groups[{i}][{k!r}][{j}]", "optimizer_state")
        for p, st in list(opt.state.items())[:4096]:
            pname = self.param_names.get(id(p), "<parameter>")
            if type(st) is dict:
                for k, v in st.items():
                    if _is(v, _Tensor):
                        self.walk(v, f"{name}.state[{pname}][{k!r}]", "optimizer_state")


# Caches of what a code object's bytecode says, held weakly: a function made by exec in a loop, or
# a closure's code, must not stay alive (with its constants) because a call was once named.
_global_reads = weakref.WeakKeyDictionary()


def _code_names(code, out, depth=0):
    """Global names the code (and the functions defined in it) reads. Not co_names: it also holds
    every attribute name, and `cfg.k` would make a global `k` that the code never reads a value
    the function depends on."""
    names = _global_reads.get(code)
    if names is None:
        names = _global_reads[code] = frozenset(
            ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
    out.update(names)
    if depth < 3:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                _code_names(c, out, depth + 1)
    return out


_first_use = weakref.WeakKeyDictionary()  # code -> {name: file:line}


def _where_used(code, name):
    """file:line of the first instruction of code (or the code defined in it) that reads name: for
    `cfg.flag`, a load of cfg followed by the attribute flag (not the line that reads cfg.bias);
    failing that, the first load of the root."""
    cached = _first_use.setdefault(code, {})
    if name in cached:
        return cached[name]
    root = _root_of(name)
    rest = name[len(root):]
    attr = rest[1:].split(".", 1)[0].split("[", 1)[0] if rest.startswith(".") else None
    found = {}  # True: the root followed by attr; False: the root alone
    attr_read = False  # attr is read somewhere, of whatever object (`self.k` in a helper)
    escapes = False  # the root is passed on (an argument, a method's self): code elsewhere may read attr
    stack = [code]
    while stack and True not in found:
        c = stack.pop(0)
        ins = list(dis.get_instructions(c))
        attr_read = attr_read or any(x.opname in ("LOAD_ATTR", "LOAD_METHOD") and x.argval == attr for x in ins)
        for i, x in enumerate(ins):
            if not (x.opname.startswith("LOAD_") and x.argval == root and x.positions and x.positions.lineno):
                continue
            at = f"{c.co_filename.rsplit('/', 1)[-1]}:{x.positions.lineno}"
            k = i + 1
            while k < len(ins) and ins[k].opname in ("COPY", "DUP_TOP"):  # `obj.a += 1` copies obj first
                k += 1
            nxt = ins[k] if k < len(ins) else None
            if attr is not None and nxt is not None and nxt.opname in ("LOAD_ATTR", "LOAD_METHOD") \
                    and nxt.argval == attr:
                found[True] = at
                break
            escapes = escapes or nxt is None or nxt.opname != "LOAD_ATTR"
            found.setdefault(False, at)
        stack.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
    # An attribute the code never reads (model.k where only model.buf is read) is not a value the
    # function depends on: no line uses it.
    where = found.get(True, found.get(False, "") if attr is None or attr_read or escapes else "")
    cached[name] = where
    return where




class Sources:
    """One compiled call's view of its sources; built on the engine's first question."""

    def __init__(self, owner, args, kwargs, caller):
        self.owner = owner
        self.args = args
        self.kwargs = kwargs
        if caller is None:
            # The frame that called the compiled function: above its __call__ on the stack.
            call_code = type(owner).__call__.__code__
            f = sys._getframe(1)
            while f is not None and f.f_code is not call_code:
                f = f.f_back
            caller = f.f_back if f is not None else None
        self.caller = caller
        self._walk = None

    def _collect(self):
        if self._walk is not None:
            return self._walk
        w = _Walk()
        owner = self.owner
        fn = owner._fn
        for name, v in self._arguments():
            w.walk(v, name, "argument")
        if owner._module is not None:
            w.walk(owner._module, self._module_name(), "parameter")
        code = getattr(fn, "__code__", None)
        closure = getattr(fn, "__closure__", None)
        if code is not None and closure:
            for name, cell in zip(code.co_freevars, closure):
                try:
                    w.walk(cell.cell_contents, name, "closure")
                except ValueError:  # an empty cell
                    pass
        glb = getattr(fn, "__globals__", None)
        if code is not None and isinstance(glb, dict):
            names = _code_names(code, set())
            # The functions it calls, defined in the same module, read globals too.
            for n in sorted(names):
                v = glb.get(n)
                if type(v) is types.FunctionType and v.__globals__ is glb:
                    _code_names(v.__code__, names, 1)
            optimizers = []
            for n in sorted(names):
                if n in glb:
                    v = glb[n]
                    if _is(v, _Optimizer):
                        optimizers.append((n, v))  # after the modules: state keys name parameters
                    elif not _is(v, (types.ModuleType, types.FunctionType, type)):
                        w.walk(v, n, "global")
            for n, v in optimizers:
                w.walk(v, n, "global")
        self._walk = w
        return w

    def _arguments(self):
        """(name, value) of every parameter of the function, defaults included, as the call bound them."""
        try:
            sig = inspect.signature(self.owner._fn)
            bound = sig.bind(*self.args, **self.kwargs)
            bound.apply_defaults()
        except (TypeError, ValueError):
            names = self.owner._arg_names
            return [(names[i] if i < len(names) else f"args[{i}]", a) for i, a in enumerate(self.args)] + list(
                self.kwargs.items())
        out = []
        for name, v in bound.arguments.items():
            kind = sig.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                out.extend((f"{name}[{i}]", a) for i, a in enumerate(v))
            elif kind is inspect.Parameter.VAR_KEYWORD:
                out.extend(v.items())
            else:
                out.append((name, v))
        return out

    def _module_name(self):
        """The name the caller has for the compiled module (`model`), else `self`."""
        owner = self.owner
        name = owner.__dict__.get("_root_name")
        if name:
            return name
        # The expression the caller called it by (`model(x)`, `self.net(x)`): read from its source,
        # not from its locals (on Python 3.11 that copies them into a dict the frame keeps).
        f = self.caller
        if f is not None:
            name = _call_target(f)
            if name:
                owner.__dict__["_root_name"] = name
                return name
            for k, v in list(f.f_globals.items()):
                if (v is owner._module or v is owner) and not k.startswith("_"):
                    owner.__dict__["_root_name"] = k
                    return k
        return "self"

    # ---- what the engine calls ----

    def tensors(self):
        """Handed over once: kept here, a lazy tensor among them (a module attribute the call
        reassigns) would stay alive and become an output of the graph."""
        w = self._collect()
        out, w.tensors = w.tensors, []
        return out

    def values(self):
        """(name, value text, first use, is float) of every plain value the call can see by name."""
        code = getattr(self.owner._fn, "__code__", None)
        out = []
        for kind, name, v in self._collect().values:
            where = _where_used(code, name) if code is not None else ""
            if type(v) is str and len(v) > 200:
                continue  # a long text is data, not a setting; comparing it on every recompile costs
            try:
                text = repr(v)
            except ValueError:  # an int too long to print
                continue
            out.append((name, text, where, type(v) is float))
        return out

    def scalar(self, value, side=""):
        """(kind, name) of the number the op being issued got: ("literal", "0.5") when the code
        writes it as a number, None when nobody can tell (a constant of a backward formula)."""
        top = sys._getframe(1)
        # A literal in the user's code stays that literal: asked for every int of a trace (a loop's
        # `x + 1`), it is found once per instruction.
        key = (top.f_lasti, side, type(value), repr(value))
        seen = _literals.get(top.f_code)
        if seen is not None and key in seen:
            return seen[key]
        named = self._scalar(top, value, side)
        if named is not None and named[0] == "literal" and not _is_library(top):
            _literals.setdefault(top.f_code, {})[key] = named
        if named is None and _is_library(top):
            # A number of dyn's own making (zeros' 0.0 inside a conv, a fused update's lr): the one
            # user-visible path holding it, else a constant of that function.
            matches = [(k, n) for k, n, v in self._collect().values if type(v) is float and v == value]
            if len(matches) == 1:
                return matches[0]
            return ("literal", f"{value!r} in dyn's {top.f_code.co_name}")
        return named

    def stored_name(self):
        """The variable that the value Python is reading now (a graph break's .item() or bool()) is
        assigned to on the same line of the user's code, written directly or through int(),
        float() or bool() (`longest = int(lens.max().item())`); "" when it is not stored so."""
        f = sys._getframe(1)
        if _is_library(f):
            return ""  # read by dyn's own code: what the user stores is something else
        return _store_target(f.f_code, f.f_lasti)

    def _scalar(self, f, value, side):
        text = _operand_text(f, value, side)
        if text is None and _is_library(f):
            text = _argument_holding(f, value)
        # A helper of dyn's passes the number on: the expression its caller wrote is the better name.
        while text is not None and text[0] == "name" and _is_library(f) and text[1].isidentifier() \
                and text[1] in f.f_code.co_varnames[:f.f_code.co_argcount] and f.f_back is not None:
            up = _operand_text(f.f_back, value, "")
            if up is None:
                break
            f, text = f.f_back, up
        if text is None or (_is_library(f) and not (text[0] == "name" and _simple_access(text[1]))):
            # A number one of dyn's modules passes on (LayerNorm's eps): the attribute of the module
            # whose forward is running, by the module's path.
            named = self._module_attribute(f, value)
            if named is not None:
                return named
        if text is None:
            return None
        if text[0] == "literal":
            return ("literal", text[1])
        if not _is_library(f):
            name = text[1]
            # In the compiled module's own forward, self is the module: name it as the caller does.
            owner = self.owner
            if owner._module is not None and name.startswith("self.") and \
                    f.f_code is getattr(owner._fn, "__code__", None):
                return ("attribute", self._module_name() + name[4:])
            return (_kind_of(f, name, self), name)
        # Inside dyn (an optimizer, a functional): a hyperparameter read as it is, named by the
        # user-visible path that holds this value, when exactly one does.
        if _simple_access(text[1]):
            matches = []
            for k, n, v in self._collect().values:
                if isinstance(v, float):
                    if v == value:
                        matches.append((k, n))
                    elif v == -value and v != 0:
                        matches.append((k, "-" + n))
            if len(matches) > 1:  # the same value in several places: the one read by that key
                key = _last_key(text[1])
                matches = [m for m in matches if key and _last_key(m[1]) == key]
            if len(matches) == 1:
                return matches[0]
        named = self._module_attribute(f, value)
        if named is not None:
            return named
        return ("local", f"{text[1]} in {f.f_code.co_filename.rsplit('/', 1)[-1]}:{f.f_lineno}")

    def _module_attribute(self, frame, value):
        """("attribute", "model.blocks[0].ln1.eps") when a forward of one of dyn's modules is running
        below frame and that module has exactly one float attribute equal to value. Only dyn's own
        frames are looked into (their `self`), never the user's."""
        names = self._collect().module_names
        f = frame
        while f is not None and _is_library(f):
            if f.f_code.co_name == "forward" and f.f_code.co_argcount and f.f_code.co_varnames[0] == "self":
                m = f.f_locals.get("self")
                path = names.get(id(m))
                d = _instance_dict(m) if path is not None else None
                if d is not None:
                    hits = [k for k, v in d.items() if type(v) is float and type(k) is str and
                            not k.startswith("_") and (v == value or (v != v and value != value))]
                    if len(hits) == 1:
                        return ("attribute", f"{path}.{hits[0]}")
                return None
            f = f.f_back
        return None
