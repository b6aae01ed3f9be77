-i --no-color --break recompile scripts/examples/recompiles.py
exit(3)
print("not reached")
