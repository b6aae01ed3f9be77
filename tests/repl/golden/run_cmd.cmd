--no-color
:run tests/repl/scenarios/argv.py one two
:run tests/repl/scenarios/raises.py
:graphs
y.shape
:run tests/repl/scenarios/lazy.py
:graphs
:reset
:graphs
:events
:breaks
:why-recompile
:guards
:stats
:graph
:dot
