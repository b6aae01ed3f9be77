"""cache_limit=1 and a changing Python int (a constant of the graph): the second call falls back to eager."""
import dyn


@dyn.compile(cache_limit=1)
def small(x, k):
    return x * k


for k in (1, 2, 3):
    r = small(dyn.ones(2), k)
print(r)
