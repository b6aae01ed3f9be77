"""dyn.random (torch.random): the default generator's seed and state, and fork_rng."""
import contextlib

import _dyn

from ._torch_api import Generator, get_rng_state, set_rng_state, seed  # noqa: F401

manual_seed = _dyn.manual_seed
initial_seed = _dyn.initial_seed

__all__ = ["Generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Random numbers drawn inside the block do not move the default generator outside it."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
