-i --no-color --break recompile:layer tests/repl/scenarios/lazy.py
:where
y
y.shape, y.dtype, y.ndim
x.shape
scale
y + 1
y
:graphs
:events
:continue
:graphs
b.sum()
