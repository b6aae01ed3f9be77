"""nn.Module: parameters, buffers and submodules registered by attribute assignment, as in PyTorch.

Parameters, buffers and child modules live only in the _parameters, _buffers and _modules dicts
(never in __dict__), so `m.weight = None`, `del m.weight` and edits of `m._parameters` all stay
consistent; __getattr__ finds them there.
"""
import copy
import itertools
from collections import OrderedDict, namedtuple

import dyn

from .. import Parameter, is_parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by register_forward_hook / register_forward_pre_hook: .remove() unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks):
        self.hooks_dict = hooks
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        self.hooks_dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _check_device(fn, device):
    """The engine's device check (the CPU, or torch_xla's device, which is the CPU under dyn)."""
    import _dyn

    _dyn._check_device(fn, device)


def _optional_parameters(module, present, shape, dtype, **makers):
    """Registers each name as Parameter(maker(*shape, dtype=dtype)) if present, else as None (as PyTorch
    does for affine=False or bias=False: the name stays, so repr, state_dict and `m.bias is None` agree)."""
    for name, make in makers.items():
        module.register_parameter(name, Parameter(make(*shape, dtype=dtype)) if present else None)


def _addindent(text, spaces):
    lines = text.split("\n")
    return lines[0] if len(lines) == 1 else "\n".join([lines[0]] + [" " * spaces + line for line in lines[1:]])


def _typename(value):
    return f"dyn.{type(value).__name__}" if isinstance(value, dyn.Tensor) else type(value).__name__


class Module:
    """Base class of models: Parameters, buffers and Modules assigned as attributes are registered."""

    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments: Module.__init__() takes "
                            "none (pass them to your subclass's __init__ instead)")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()

    # ---- attributes ----
    def __getattr__(self, name):
        d = self.__dict__
        for kind in ("_parameters", "_buffers", "_modules"):
            if kind in d and name in d[kind]:
                return d[kind][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params, buffers, modules = d.get("_parameters"), d.get("_buffers"), d.get("_modules")

        def forget():
            for registry in (d, params, buffers, modules):
                if registry is not None and name in registry:
                    del registry[name]
            self._non_persistent_buffers_set.discard(name)

        if is_parameter(value):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            forget()
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' (nn.Parameter or None "
                                "expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            if name in modules:  # replacing a child keeps its place, as PyTorch (children() order)
                modules[name] = value
                return
            forget()
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (nn.Module or None "
                                "expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, dyn.Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (dyn.Tensor or None "
                                "expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for kind in ("_parameters", "_buffers", "_modules"):
            registry = self.__dict__.get(kind)
            if registry is not None and name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def _check_new_name(self, what, name):
        if not isinstance(name, str):
            raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f"{what} name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError(f"{what} name can't be empty string \"\"")
        if name in self.__dict__ or (hasattr(type(self), name)):
            raise KeyError(f"attribute '{name}' already exists")

    def _check_member_name(self, what, kind, name):
        """Before registering name in the registry kind: Module.__init__ has run, and a new name is free
        (re-registering one keeps its place)."""
        if kind not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")
        if name not in self.__dict__[kind]:
            self._check_new_name(what, name)
            if any(name in self.__dict__[other] for other in ("_parameters", "_buffers", "_modules") if other != kind):
                raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that is state but not a parameter (BatchNorm's running_mean); persistent buffers are
        part of state_dict()."""
        self._check_member_name("buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, dyn.Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (dyn.Tensor or None "
                            "required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Registers param (an nn.Parameter, or None for an absent one such as bias=False) as name."""
        self._check_member_name("parameter", "_parameters", name)
        if param is not None and not is_parameter(param):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' (nn.Parameter or "
                            "None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Registers module (or None) as the child name."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if name not in self._modules:
            self._check_new_name("module", name)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        """The submodule at dotted path target ('' is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def _get_member(self, target, kind, what):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        if name not in getattr(mod, kind):
            raise AttributeError(f"`{name}` is not {what}")
        return getattr(mod, name)

    def get_parameter(self, target):
        return self._get_member(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target):
        return self._get_member(target, "_buffers", "a buffer")

    # ---- calling ----
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")

    def __call__(self, *args, **kwargs):
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        out = self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, out)
            else:
                result = hook(self, args, out)
            if result is not None:
                out = result
        return out

    def _add_hook(self, hooks, with_kwargs_set, hook, prepend, with_kwargs):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if with_kwargs:
            with_kwargs_set.add(handle.id)
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) runs before forward and may return new args (with_kwargs: hook(module, args,
        kwargs) may return (args, kwargs))."""
        return self._add_hook(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs, hook, prepend,
                              with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) runs after forward and may return a new output (with_kwargs: hook(module,
        args, kwargs, output))."""
        return self._add_hook(self._forward_hooks, self._forward_hooks_with_kwargs, hook, prepend, with_kwargs)

    def register_full_backward_hook(self, hook, prepend=False):
        raise NotImplementedError("Module backward hooks are not supported by dyn; read the parameters' .grad "
                                  "after loss.backward() instead")

    register_backward_hook = register_full_backward_hook
    register_full_backward_pre_hook = register_full_backward_hook

    # ---- traversal ----
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for self and every descendant; a module reachable twice is listed once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, kind, prefix, recurse, remove_duplicate):
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        seen = set()
        for mname, m in modules:
            for name, v in getattr(m, kind).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield (mname + "." if mname else "") + name, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        """Calls fn on every submodule (children first) and then on self, as PyTorch; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes ----
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.zero_()

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    # ---- state ----
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """OrderedDict of parameters and persistent buffers by dotted name, in PyTorch's order: each module's
        own parameters, its own buffers, then its children."""
        if args:  # PyTorch's positional (destination, prefix, keep_vars)
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        out = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                out[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=out, prefix=prefix + name + ".", keep_vars=keep_vars)
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies values into the existing parameters and buffers. strict: missing or unexpected keys are an
        error (PyTorch's message); a size mismatch always is. Returns (missing_keys, unexpected_keys)."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        if assign:
            raise NotImplementedError("load_state_dict(assign=True) is not supported by dyn")
        missing, unexpected, errors = [], [], []

        def load(module, prefix):
            local = OrderedDict((n, p) for n, p in module._parameters.items() if p is not None)
            local.update((n, b) for n, b in module._buffers.items()
                         if b is not None and n not in module._non_persistent_buffers_set)
            for name, own in local.items():
                key = prefix + name
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = state_dict[key]
                if not isinstance(value, dyn.Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected dyn.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                    continue
                if tuple(value.shape) != tuple(own.shape):
                    errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {own.shape}.")
                    continue
                with dyn.no_grad():
                    own.copy_(value)
            for key in state_dict.keys():
                if key.startswith(prefix):
                    parts = key[len(prefix):].split(".", 1)
                    if parts[0] not in (module._modules if len(parts) > 1 else local):
                        unexpected.append(key)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self, "")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ---- conversion ----
    def _apply(self, fn, _memo=None):
        """Replaces every parameter and buffer t by fn(t) (parameters stay Parameters, grads follow; a tensor
        shared by several modules stays shared)."""
        memo = {} if _memo is None else _memo
        for m in self.children():
            m._apply(fn, memo)
        with dyn.no_grad():
            for registry, is_param in ((self._parameters, True), (self._buffers, False)):
                for name, t in registry.items():
                    if t is None:
                        continue
                    if id(t) not in memo:
                        new = fn(t)
                        if new is not t and is_param:
                            param = Parameter(new.detach(), requires_grad=t.requires_grad)
                            if t.grad is not None:
                                param.grad = fn(t.grad)
                            new = param
                        memo[id(t)] = (t, new)  # t is kept alive so that its id is not reused
                    registry[name] = memo[id(t)][1]
        return self

    def to(self, *args, **kwargs):
        """to(dtype), to(device), to(device, dtype), to(tensor): floating parameters and buffers take the dtype
        (as new tensors: build optimizers afterwards). dyn runs on the CPU only."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, dyn.dtype):
                dtype = a
            elif isinstance(a, dyn.Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, bool):
                continue  # non_blocking
            else:
                device = a
        _check_device("Module.to()", device)
        if dtype is None:
            return self
        if not isinstance(dtype, dyn.dtype):
            raise TypeError(f"Module.to() expects a dyn dtype, got {dtype!r}")
        if not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")
        return self._apply(lambda t: t.to(dtype) if t.dtype.is_floating_point and t.dtype != dtype else t)

    def type(self, dst_type):
        """Casts every parameter and buffer (integer ones too) to dst_type."""
        if not isinstance(dst_type, dyn.dtype):
            raise TypeError(f"Module.type() expects a dyn dtype, got {dst_type!r}")
        return self._apply(lambda t: t.to(dst_type) if t.dtype != dst_type else t)

    def float(self):
        return self.to(dyn.float32)

    def double(self):
        return self.to(dyn.float64)

    def half(self):
        return self.to(dyn.float16)

    def bfloat16(self):
        return self.to(dyn.bfloat16)

    def cpu(self):
        return self

    def cuda(self, device=None):
        _check_device("Module.cuda()", "cuda" if device is None else device)
        return self

    # ---- copying ----
    def __deepcopy__(self, memo):
        """A copy with new tensors (dyn tensors cannot be pickled, so copy.deepcopy needs this)."""
        for m in self.modules():
            for t in itertools.chain(m._parameters.values(), m._buffers.values(), m.__dict__.values()):
                if isinstance(t, dyn.Tensor) and id(t) not in memo:
                    memo[id(t)] = _copy_tensor(t)
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            new.__dict__[k] = copy.deepcopy(v, memo)
        return new

    # ---- printing ----
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text between the parentheses of this module's repr (set it in subclasses)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_addindent(repr(m), 2)}" for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _copy_tensor(t):
    new = t.detach().clone()
    if is_parameter(t):
        return Parameter(new, requires_grad=t.requires_grad)
    if t.requires_grad and t.is_leaf:
        new.requires_grad_(True)
    return new


class _FunctionModule(Module):
    """A module whose forward is _fn(input, *its attributes named in _args), and whose repr lists them:
    what the modules that only wrap one functional with stored arguments share."""

    _fn = None
    _args = ()

    def _arg_values(self):
        return [getattr(self, name) for name in self._args]

    def forward(self, input):
        return type(self)._fn(input, *self._arg_values())

    def extra_repr(self):
        return ", ".join(f"{name}={value}" for name, value in zip(self._args, self._arg_values()))
