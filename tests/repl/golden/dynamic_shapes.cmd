-i --no-color scripts/examples/sampling.py
:why-recompile GPT
:graph GPT[2].0
:stats
