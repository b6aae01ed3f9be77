-i --no-color --break graph-break tests/repl/scenarios/frames.py
:where
:up
:where
:list 2
k
:up
:down
:down
k
k = 100
:list x
:up 0
:continue
:up
:stats
