--no-color
:help
:help graph
:help :why-recompile
:help break
:help gaphs
:help graph extra
