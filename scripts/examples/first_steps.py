"""A first dyn script: tensors, broadcasting, reductions, a tiny linear model's forward pass.

Run it with:  build/repl/dynrepl scripts/examples/first_steps.py
"""
import dyn
import dyn.nn.functional as F

dyn.manual_seed(0)

# Tensors behave like PyTorch's: creation, dtypes, broadcasting, views.
x = dyn.arange(6, dtype=dyn.float32).reshape(2, 3)
print("x =", x)
print("x.T.shape =", x.T.shape, " x.dtype =", x.dtype)
print("x * 10 + [1, 2, 3] =", x * 10 + dyn.tensor([1.0, 2.0, 3.0]))
print("column sums:", x.sum(dim=0), " row max:", x.max(dim=1).values)

# A tiny classifier: logits = inputs @ W^T + b, then cross-entropy against labels.
inputs = dyn.randn(4, 3)
W = dyn.randn(5, 3) * 0.1
b = dyn.zeros(5)
logits = F.linear(inputs, W, b)
labels = dyn.tensor([0, 3, 1, 4])
loss = F.cross_entropy(logits, labels)
print("probabilities:", F.softmax(logits, dim=1))
print("predicted:", logits.argmax(dim=1), " loss:", round(loss.item(), 4))

# Views share memory: writing through a view changes the base tensor.
row = x[1]
row += 100
print("after x[1] += 100:", x)
