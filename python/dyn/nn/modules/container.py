"""Containers: Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict."""
import operator
from collections import OrderedDict

from .. import Parameter, is_parameter
from .module import Module, _addindent


def _index(i, n, what):
    i = operator.index(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for a {what} of length {n}")
    return i % n


def _compressed_repr(module):
    """Children as lines, runs of identical reprs folded into '(a-b): k x repr' (as PyTorch's ModuleList)."""
    lines, items = [], list(module._modules.items())
    i = 0
    while i < len(items):
        text = repr(items[i][1])
        j = i
        while j + 1 < len(items) and repr(items[j + 1][1]) == text:
            j += 1
        name = items[i][0] if j == i else f"{items[i][0]}-{items[j][0]}"
        lines.append(f"({name}): " + ("" if j == i else f"{j - i + 1} x ") + _addindent(text, 2))
        i = j + 1
    return type(module).__name__ + ("(\n  " + "\n  ".join(lines) + "\n)" if lines else "()")


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: submodules in order, registered as '0', '1', ..."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def _renumber(self, modules):
        """Registers modules afresh as '0', '1', ... in place of the current submodules."""
        self._modules.clear()
        for j, m in enumerate(modules):
            self.add_module(str(j), m)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._renumber(items)
        return self


class Sequential(_ModuleSequence):
    """Modules called in order, each on the previous one's output."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Sequential(OrderedDict(list(self._modules.items())[i]))
        return list(self._modules.values())[_index(i, len(self), "Sequential")]

    def __setitem__(self, i, module):
        key = list(self._modules)[_index(i, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, i):
        keys = list(self._modules)
        for key in (keys[i] if isinstance(i, slice) else [keys[_index(i, len(keys), "Sequential")]]):
            del self._modules[key]
        # renumber, as PyTorch does, so that indices stay 0..n-1
        self._renumber(list(self._modules.values()))

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of submodules, registered as '0', '1', ... (no forward of its own)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ModuleList(list(self._modules.values())[i])
        return self._modules[str(_index(i, len(self), "ModuleList"))]

    def __setitem__(self, i, module):
        self.add_module(str(_index(i, len(self), "ModuleList")), module)

    def __delitem__(self, i):
        items = list(self._modules.values())
        del items[i]
        self._renumber(items)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def insert(self, index, module):  # returns None, as PyTorch's ModuleList.insert does
        super().insert(index, module)

    def __repr__(self):
        return _compressed_repr(self)


class _NamedDict(Module):
    """Shared dict interface of ModuleDict and ParameterDict over one of the Module's own dicts."""

    _registry = None  # the name of that dict: "_modules" or "_parameters"

    def __init__(self, entries=None):
        super().__init__()
        if entries is not None:
            self.update(entries)

    def _entries(self):
        return self.__dict__[self._registry]

    def __getitem__(self, key):
        return self._entries()[key]

    def __delitem__(self, key):
        del self._entries()[key]

    def __len__(self):
        return len(self._entries())

    def __iter__(self):
        return iter(self._entries())

    def __contains__(self, key):
        return key in self._entries()

    def clear(self):
        self._entries().clear()

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def keys(self):
        return self._entries().keys()

    def values(self):
        return self._entries().values()

    def items(self):
        return self._entries().items()

    def update(self, entries):
        pairs = entries.items() if hasattr(entries, "items") else entries
        for key, value in pairs:
            self[key] = value


class ModuleDict(_NamedDict):
    """Submodules by name, in insertion order."""

    _registry = "_modules"

    def __init__(self, modules=None):
        super().__init__(modules)

    def __setitem__(self, key, module):
        self.add_module(key, module)


def _as_parameter(value):
    return value if is_parameter(value) or value is None else Parameter(value)


def _parameter_lines(pairs):
    """extra_repr of ParameterList/ParameterDict: one '(name): Parameter containing: [...]' line a parameter."""
    return "\n".join(f"({k}): Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}]"
                     for k, p in pairs)


class ParameterList(Module):
    """A list of Parameters, registered as '0', '1', ...; plain tensors are wrapped in Parameter."""

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ParameterList(list(self._parameters.values())[i])
        return self._parameters[str(_index(i, len(self), "ParameterList"))]

    def __setitem__(self, i, value):
        self.register_parameter(str(_index(i, len(self), "ParameterList")), _as_parameter(value))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value):
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return _parameter_lines(enumerate(self))


class ParameterDict(_NamedDict):
    """Parameters by name; plain tensors are wrapped in Parameter."""

    _registry = "_parameters"

    def __init__(self, parameters=None):
        super().__init__(parameters)

    def __setitem__(self, key, value):
        self.register_parameter(key, _as_parameter(value))

    def extra_repr(self):
        return _parameter_lines(self.items())
