--no-color
:break compile
:run tests/repl/scenarios/raises.py
:continue
:pm
print("w is", w.shape)
:where
:quit
print("back at the prompt")
:where
