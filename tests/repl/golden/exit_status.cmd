--no-color
print("before")
exit(3)
print("not reached")
