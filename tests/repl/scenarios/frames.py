"""A compiled function stopped at its graph break: :up/:down/:list, and a local assigned at the
prompt that the function then uses (tests/repl/golden/stop_frames)."""
import dyn


@dyn.compile
def f(x, k):
    y = x * 2.0
    v = y.sum().item()  # a graph break: the script stops here
    return v + k


print(f(dyn.ones(3), 1))
