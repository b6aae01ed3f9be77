--no-color
x = 41
x + 1
quit()
print("not reached")
