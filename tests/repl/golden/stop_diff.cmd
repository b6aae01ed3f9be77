-i --no-color --break recompile scripts/examples/recompiles.py
:diff f[0] .
:continue
:diff f[1] .
:diff . f[0]
:continue
:diff f[0] f[1]
:diff f[0].0 f[2].0
:diff f[0] .
