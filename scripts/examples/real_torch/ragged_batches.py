"""One training loop, two captures. `dynrepl scripts/examples/real_torch/ragged_batches.py` runs it on dyn
(`import torch` gives dyn); `dynrepl --real-torch scripts/examples/real_torch/ragged_batches.py` on PyTorch 2.15
and its own torch.compile (Dynamo). The same views explain both:

    dynrepl --batch -e :why-recompile -e :breaks scripts/examples/real_torch/ragged_batches.py
    dynrepl --real-torch --batch -e :why-recompile -e :breaks scripts/examples/real_torch/ragged_batches.py
    dynrepl --real-torch --break recompile scripts/examples/real_torch/ragged_batches.py   # stops at Dynamo's recompile

The last batch is ragged (4, 4, 2 rows): both recompile `step` for it. Dynamo also cuts `step`
at `loss.backward()` and `report` at `.item()`; dyn traces backward, reads the `.item()` of an
input without a cut (a guard on its value), and recompiles `report` when `n` changes.
(This file has a folder of its own: torch imports the standard library's `profile`, which
scripts/examples/profile.py would shadow.)
"""
import torch

torch.manual_seed(0)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile(backend="eager")  # Dynamo's graphs run as they are: the capture is what this shows
def step(x, y):
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


@torch.compile(backend="eager")
def report(loss, n):
    if loss.item() > 1.0:  # Python needs the value: a graph break
        return loss * n
    return loss


data, target = torch.randn(10, 8), torch.randn(10, 2)
for epoch in range(2):
    for i in range(0, 10, 4):  # batches of 4, 4 and 2 rows
        opt.zero_grad()
        loss = step(data[i:i + 4], target[i:i + 4])
        opt.step()
    print(f"epoch {epoch}: loss {float(report(loss.detach(), epoch)):.4f}")
