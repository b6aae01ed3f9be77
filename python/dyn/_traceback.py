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


def strip(exc):
    """Leaves dyn's frames out of exc's traceback and of the exceptions it chains; returns how
    many frames were left out."""
    hidden, seen = 0, set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        hidden += _strip_one(exc)
        exc = exc.__cause__ or exc.__context__
    return hidden
