-i --no-color tests/repl/scenarios/profile.py
:profile f
:profile f[0].1
:profile --reset
:profile
:profile f
g(x).shape
:profile
:profile <lambda>
:profile nosuch
:profile f g
:profile --bogus
:profile f --reset
:help profile
:quit
