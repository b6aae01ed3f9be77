"""An uncaught exception two calls inside a compiled function: dynrepl --pm opens the prompt in
the frame that raised it (tests/repl/golden/post_mortem)."""
import dyn


def helper(t, n):
    scale = n * 2
    return t.view(scale, 5)  # raises


@dyn.compile
def f(x):
    y = x * 3.0
    return helper(y, 2)


f(dyn.ones(4))
