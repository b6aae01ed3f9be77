-i --no-color scripts/examples/branchy.py
:breaks
:breaks fn
:graphs
:graphs fn
:graph fn[0]
:graph fn[1] -v
:guards fn
:events graph-break
:events graph_break fn
:diff fn[0].0 fn[1].0
:diff fn[0] fn[1]
:dot fn[0].0
:dot fn[1]
:dot fn /tmp/dynrepl_golden_branchy.dot
text = open("/tmp/dynrepl_golden_branchy.dot").read()
print(text.splitlines()[0], len(text), text.count("subgraph cluster_"), "graph break" in text)
