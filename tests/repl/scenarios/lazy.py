"""Stops while values are still lazy: the second call replays `y = x * 2`, then fails a guard."""
import dyn


@dyn.compile
def h(x, scale):
    y = x * 2
    z = y * scale  # the constant guard fails here on the second call; y is still pending
    return z.relu()


a = h(dyn.ones(4, 8), 1.0)
b = h(dyn.ones(4, 8), 3.0)
print("sums", a.sum().item(), b.sum().item())
