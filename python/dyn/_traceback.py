"""Tracebacks as dynrepl prints them: the frames inside dyn's own package (a compiled function's
__call__, a functional's body) are left out, so an error or a Ctrl-C points at the user's lines.
DYNREPL_TRACEBACK=full keeps every frame."""
import types

from . import _sources


def _is_library(filename):
    return bool(_sources._package_dir) and filename.startswith(_sources._package_dir) or filename == "<dynrepl>"


def _strip_one(exc):
    tb = exc.__traceback__
    kept, hidden = [], 0
    while tb is not None:
        if _is_library(tb.tb_frame.f_code.co_filename):
            hidden += 1
        else:
            kept.append(tb)
        tb = tb.tb_next
    if not kept or not hidden:  # nothing of the user's, or nothing to hide: as it is
        return 0
    new = None
    for t in reversed(kept):
        new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
    exc.__traceback__ = new
    return hidden


# ModuleNotFoundError's module name -> a note for the user (dyn._real_torch: how to install
# PyTorch, why torch_xla is missing). Added when the error is printed, not raised: a finder that
# raised would break importlib.util.find_spec probes, which must see None.
MODULE_HINTS = {}


def strip(exc):
    """Leaves dyn's frames out of exc's traceback and of the exceptions it chains; returns how
    many frames were left out. A missing module with a hint gets it as a note."""
    if isinstance(exc, ModuleNotFoundError) and exc.name in MODULE_HINTS \
            and MODULE_HINTS[exc.name] not in getattr(exc, "__notes__", ()):
        exc.add_note(MODULE_HINTS[exc.name])
    hidden, seen = 0, set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        hidden += _strip_one(exc)
        exc = exc.__cause__ or exc.__context__
    return hidden
