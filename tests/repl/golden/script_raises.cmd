-i --no-color -e :graphs -e y.shape -e ":graph step" tests/repl/scenarios/raises.py
w.sum()
:events
