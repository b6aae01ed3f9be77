"""`import torch` inside dynrepl gives dyn: a meta-path finder maps torch, torchvision and
torch_xla (and their submodules) onto dyn's modules. `dynrepl --real-torch` does not install it.

A name dyn does not have fails at import with a message that names it, rather than with an
AttributeError later.
"""
import importlib
import importlib.abc
import importlib.util
import sys

# Top-level names and the dyn package each stands for.
ROOTS = {
    "torch": "dyn",
    "torchvision": "dyn.compat.torchvision",
    "torch_xla": "dyn.compat.torch_xla",
}

# torch submodules whose dyn module has another name.
RENAMED = {
    "torch._dynamo": "dyn.compat._dynamo",
    "torch._dynamo.exc": "dyn.compat._dynamo.exc",
    "torch._inductor": "dyn.compat._inductor",
    "torch.nn.parameter": "dyn.nn",
    "torch.utils.data.dataloader": "dyn.utils.data",
    "torch.utils.data.dataset": "dyn.utils.data",
    "torch.utils.data.sampler": "dyn.utils.data",
    "torch.optim.adamw": "dyn.optim.adam",
}


def target_of(name):
    """The dyn module that `name` (torch.X.Y) stands for, or None if name is not ours to map."""
    root = name.partition(".")[0]
    if root not in ROOTS:
        return None
    if name in RENAMED:
        return RENAMED[name]
    return ROOTS[root] + name[len(root):]


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._own_spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module):
        # The import system set __spec__ to the alias's spec; the module keeps its own identity.
        if self._own_spec is not None:
            module.__spec__ = self._own_spec


class TorchFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        dyn_name = target_of(name)
        if dyn_name is None:
            return None
        try:
            found = importlib.util.find_spec(dyn_name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(
                f"No module named '{name}': dynrepl maps 'import {name.partition('.')[0]}' onto dyn, "
                f"which has no '{name}' (it would be '{dyn_name}'). Run the script with "
                f"`dynrepl --real-torch` to use the installed PyTorch instead, or avoid this module.",
                name=name,
            )
        return importlib.util.spec_from_loader(name, _AliasLoader(dyn_name))


_finder = TorchFinder()


def install():
    """Makes `import torch` give dyn (idempotent)."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def active():
    """Which torch `import torch` gives: 'dyn' or 'real'."""
    return "dyn" if _finder in sys.meta_path else "real"
