--no-color
:breakpoints
:break recompile f
:break fallback
:break guard-failure:f
:breakpoints
:delete 2
:delete 3
:breakpoints
:run scripts/examples/recompiles.py
:where
x.shape
scale
:graphs
:events recompile
:run scripts/examples/recompiles.py
:reset
:continue
x.shape, scale
:where
:continue
:breakpoints
:delete 1
:breakpoints
:continue
:where
:quit
print("not reached")
