--batch --no-color -e ":breaks" -e "print('inspect', y.shape)" tests/repl/scenarios/raises.py
print("stdin is never read with --batch")
