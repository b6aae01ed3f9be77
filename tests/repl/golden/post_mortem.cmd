--pm --no-color tests/repl/scenarios/pm.py
scale
t.shape
:where
:up
y.shape, x.shape
:list 1
:up
:down 2
:continue
:pm
:quit
print("not reached")
