"""An example file run again with `import dyn` giving torch: the peer then runs the example's own
model code, not a copy that could drift from it."""
import importlib.util
import sys
import types


class Alias(types.ModuleType):
    """A module that is `base` but for the attributes given."""

    def __init__(self, name, base, **attrs):
        super().__init__(name)
        self._base = base
        self.__dict__.update(attrs)

    def __getattr__(self, attr):
        return getattr(self._base, attr)


def load_with(path, module_name, stand_ins):
    """The module at path, imported with sys.modules[k] = stand_ins[k] while it runs."""
    saved = {name: sys.modules.get(name) for name in stand_ins}
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.update(stand_ins)
    try:
        spec.loader.exec_module(module)
    finally:
        for name, m in saved.items():
            if m is None:
                del sys.modules[name]
            else:
                sys.modules[name] = m
    return module
