-i --no-color --break recompile scripts/examples/recompiles.py
scale
:quit
print("not reached")
