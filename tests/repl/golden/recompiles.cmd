-i --no-color scripts/examples/recompiles.py
:graphs
:graphs f
:graph
:graph f
:graph f[0].0
:graph f[1] -v
:guards f
:why-recompile f
:why-recompile g
:events
:events recompile
:events compile f
:events guard-failure f
:stats
:diff f[0] f[1]
:diff f[0].0 f[2].0
:quit
print("not reached")
