--no-color
:run x.py
:stats​
:delete ​
:graph f[31m
:help gr aph
:delete '	'
:help x 
:break compile
:run nosuch﻿.py
:delete café
:delete nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn
:graph xééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé​
:break compile f]0;title
:breakpoints
print('alive')
