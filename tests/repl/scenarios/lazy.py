"""Stops while values are still lazy: the second call replays `y = x * 2`, then fails a guard.

At a `recompile` (or `guard-failure`) stop inside the second call, `y` is a pending node of the
replayed graph: showing it must print the node, not force a sync.
"""
import dyn


@dyn.compile
def layer(x, scale):
    y = x * 2
    z = y * scale  # an int constant: its guard fails here on the second call; y is still pending
    return z.relu()


a = layer(dyn.ones(4, 8), 1)
b = layer(dyn.ones(4, 8), 3)
print("sums", a.sum().item(), b.sum().item())
