-i --no-color --break graph-break:fn scripts/examples/branchy.py
:where
x.shape
a.shape
:breaks
:continue
:breakpoints
