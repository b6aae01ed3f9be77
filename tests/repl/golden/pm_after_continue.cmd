--pm --no-color --break compile tests/repl/scenarios/raises.py
:continue
print("w is", w.shape)
:where
:quit
print("not reached")
