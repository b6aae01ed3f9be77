-i --no-color --break compile tests/repl/scenarios/lazy.py
:where
:continue
:where
