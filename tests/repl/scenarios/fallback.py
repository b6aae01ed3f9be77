"""cache_limit=1 and a changing Python constant: the second call falls back to eager."""
import dyn


@dyn.compile(cache_limit=1)
def small(x, k):
    return x * k


for k in (1.0, 2.0, 3.0):
    r = small(dyn.ones(2), k)
print(r)
