--no-color
:break compile
dyn.compile(lambda v: v * 2)(dyn.ones(3))
print("first line typed at the stop")
:continue
print("after the first stop")
:delete 1
:break recompile
@dyn.compile
def h(v):
    return v * 2

for n in (2, 3):
    h(dyn.ones(n))

:where
for i in range(2):
    print("block typed at the stop", i)

:continue
print("the end")
