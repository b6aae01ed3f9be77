--no-color
À€
print("alive")
x = (1,
í €
2)
print("x is", x)
s = "ô€€"
s = "àŸ¿"
s = "ğ¿¿"
s = "íŸ¿ô¿¿à €ğ€€Â€"
print(len(s))
