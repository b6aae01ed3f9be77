"""Verify mode and misses explained: State (the tensors a lift's graph writes, the .grad it sets
and the generator's state, kept and put back so that the body runs from the same state and is
compared), compare (a lifted call's result against the body's, tensors bit for bit) and
describe_miss (why a lift's last try did not serve the call, as one line).
"""
import _dyn

from ._prov import _MISS, _tensor_type


class State:
    """Verify mode for a lift with effects: the tensors its graph writes and the .grad it sets,
    kept before the lifted call, what it left, and put back so that the body runs from the same
    state; compare() then checks the body left the same."""

    @staticmethod
    def before(lift, args, kwargs, root):
        writes = lift.plan.writes
        if not writes and not lift.effects and not lift.plan.random:
            return None
        f = lift.fetch(args, kwargs, root)
        if f is _MISS:
            return None  # the lifted call misses too: nothing runs
        st = State()
        st.rng = _dyn._rng_state()
        inputs, st.holders = f
        st.written = [inputs[i] for i in writes]
        with _no_grad():
            st.values = [t.detach().clone() for t in st.written]
        st.grads = [h.grad for h in st.holders]
        return st

    def after(self):
        with _no_grad():
            self.lifted_values = [t.detach().clone() for t in self.written]
        self.lifted_grads = [h.grad for h in self.holders]
        self.lifted_rng = _dyn._rng_state()
        self.restore()

    def restore(self):
        _dyn._rng_state(self.rng)
        with _no_grad():
            for t, v in zip(self.written, self.values):
                t.detach().copy_(v)
        for h, g in zip(self.holders, self.grads):
            h.grad = g

    def compare(self):
        if _dyn._rng_state() != self.lifted_rng:
            return f"the generator at {self.lifted_rng} where the body leaves it at {_dyn._rng_state()}"
        for i, (t, v) in enumerate(zip(self.written, self.lifted_values)):
            p = compare(v, t.detach(), f"the tensor the graph writes (input {i})")
            if p:
                return p
        for i, (h, g) in enumerate(zip(self.holders, self.lifted_grads)):
            if (g is None) != (h.grad is None):
                return f".grad {'None' if g is None else 'set'} for tensor {i} where the body leaves it " + (
                    "None" if h.grad is None else "set")
            p = "" if g is None else compare(g, h.grad, f"the .grad of tensor {i}")
            if p:
                return p
        return ""


def _no_grad():
    import dyn
    return dyn.no_grad()


def compare(got, want, path="the result"):
    """'' when got and want are the same (tensors bit for bit), else what differs."""
    T = _tensor_type()
    if isinstance(want, T):
        if not isinstance(got, T):
            return f"{type(got).__name__} for {path} where a tensor was expected"
        if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
            return f"{got.dtype}{list(got.shape)} for {path} where {want.dtype}{list(want.shape)} was expected"
        a, b = (t.detach().contiguous() for t in (got, want))
        if a.dtype == _dyn.bfloat16:  # numpy has none; the same bits as int16
            a, b = a.view(_dyn.int16), b.view(_dyn.int16)
        a, b = a.numpy(), b.numpy()
        if a.tobytes() != b.tobytes():
            return f"other values for {path}"
        if got.requires_grad != want.requires_grad:
            return f"requires_grad={got.requires_grad} for {path}"
        gf, wf = got.grad_fn, want.grad_fn
        if (gf is None) != (wf is None) or (gf is not None and type(gf).__name__ != type(wf).__name__) or (
                gf is not None and getattr(gf, "name", lambda: "")() != getattr(wf, "name", lambda: "")()):
            return f"grad_fn {gf} for {path} where {wf} was expected"
        return ""
    if type(got) is not type(want):
        return f"a {type(got).__name__} for {path} where a {type(want).__name__} was expected"
    if isinstance(want, (list, tuple)):
        if len(got) != len(want):
            return f"{len(got)} items for {path} where {len(want)} were expected"
        for i, (x, y) in enumerate(zip(got, want)):
            p = compare(x, y, f"{path}[{i}]")
            if p:
                return p
        return ""
    if isinstance(want, dict):
        if list(got) != list(want):
            return f"keys {list(got)} for {path}"
        for k in want:
            p = compare(got[k], want[k], f"{path}[{k!r}]")
            if p:
                return p
        return ""
    if got is want or got == want:
        return ""
    return f"{got!r} for {path} where {want!r} was expected"


def describe_miss(lift):
    """Why lift's last try did not serve the call, as one line (then forgets the value it kept), or
    None when it did not get as far as a guard (another call shape)."""
    m = lift.missed[0]
    lift.missed[0] = None
    if m is None:
        why = lift.plan.last_failure
        return f"the engine's check failed: {why}" if why else None
    i, value = m
    text, expected, where = lift.infos[i]
    try:
        actual = repr(value)
    except Exception:  # noqa: BLE001 - a repr that raises is only a worse message
        actual = f"a {type(value).__name__}"
    if len(actual) > 80:
        actual = actual[:77] + "..."
    return f"{text} failed (expected {expected}, got {actual}) at {where.rsplit('/', 1)[-1]}"
