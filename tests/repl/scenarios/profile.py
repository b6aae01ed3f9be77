import dyn

w = dyn.randn(16, 32)


@dyn.compile
def f(x):
    h = (x @ w).relu()
    if h.sum().item() > 0:  # a graph break: f runs as two graphs
        return (h * 2 + 1).tanh().sum(dim=1)
    return h


g = dyn.compile(lambda x: (x * 2 + 1).tanh())

x = dyn.ones(8, 16)
for _ in range(3):
    f(x)
    g(x)
