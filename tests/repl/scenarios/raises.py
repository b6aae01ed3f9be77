"""A script that fails after capturing a graph: -e lines and the REPL can still inspect it."""
import dyn


@dyn.compile
def step(w, x):
    return (w @ x).tanh()


w = dyn.ones(3, 4)
y = step(w, dyn.ones(4, 2))
print("first call ok:", y.shape)
w @ dyn.ones(5, 2)  # eager matmul of [3, 4] and [5, 2]: a Python exception ends the script
print("not reached")
