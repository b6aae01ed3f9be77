"""Training an MLP classifier on synthetic data, eagerly and with the whole step compiled.

Run it with:  build/repl/dynrepl scripts/examples/mlp_classifier.py
The compiled step (forward, backward, AdamW update) is one graph; the losses equal eager's bit for bit.
"""
import time

import dyn

STEPS = 30


def make_data(n=512, features=32, classes=4):
    # Points around one center per class: a task the MLP can learn.
    centers = dyn.randn(classes, features) * 2.0
    labels = dyn.randint(0, classes, (n,))
    return centers[labels] + dyn.randn(n, features), labels


def train(compiled):
    dyn.manual_seed(0)
    x, y = make_data()
    model = dyn.nn.Sequential(dyn.nn.Linear(32, 64), dyn.nn.GELU(), dyn.nn.Linear(64, 4))
    opt = dyn.optim.AdamW(model.parameters(), lr=1e-2)
    loss_fn = dyn.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = dyn.compile(step)
    t0 = time.perf_counter()
    losses = [step(x, y).item() for _ in range(STEPS)]
    dt = time.perf_counter() - t0
    accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    return losses, accuracy, dt


eager_losses, eager_acc, eager_s = train(compiled=False)
compiled_losses, compiled_acc, compiled_s = train(compiled=True)
print(f"loss: {eager_losses[0]:.4f} -> {eager_losses[-1]:.4f} over {STEPS} steps, accuracy {eager_acc:.2f}")
print(f"eager {eager_s * 1e3:.1f} ms, compiled {compiled_s * 1e3:.1f} ms")
print("compiled losses equal eager bit for bit:", compiled_losses == eager_losses)
c = dyn.debug.counters()
print(f"compiled step: {c['graphs']} graph, {c['graph_breaks']} graph breaks, {c['compiles']} compile, "
      f"{c['cache_hits']} cache hits, {c['recompiles']} recompiles")
assert compiled_losses == eager_losses and eager_losses[-1] < eager_losses[0] / 2
assert c["graphs"] == 1 and c["graph_breaks"] == 0 and c["recompiles"] == 0
