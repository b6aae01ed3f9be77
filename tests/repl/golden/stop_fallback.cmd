-i --no-color --break fallback tests/repl/scenarios/fallback.py
:where
k
:continue
:events fallback
:breakpoints
