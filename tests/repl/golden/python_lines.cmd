--no-color
x = 41
x + 1
_ * 2
None
for i in range(2):
    print(i)

def sq(v):
    return v * v

sq(7)
import dyn
t = dyn.arange(6).reshape(2, 3)
t
t.sum(dim=0)
1/0
undefined_name
t @ t
print("still here")
