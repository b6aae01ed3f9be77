# Tier 2 (trace once): a cache hit runs the compiled graph without running the body, where a
# one-time analysis of the recording call shows that is exact (dyn.compile(lift=False) turns it
# off). Run: dynrepl scripts/examples/trace_once.py, then :why-python and :guards at the prompt.
import time

import dyn


def chain(x, n):
    for _ in range(n):
        x = x * 1.0001 + 0.0001
    return x


def timed(f, *a, reps=2000):
    for _ in range(100):
        f(*a)
    t = time.perf_counter()
    for _ in range(reps):
        f(*a)
    return (time.perf_counter() - t) / reps * 1e6


x = dyn.randn(8)
replayed = dyn.compile(chain, lift=False)
lifted = dyn.compile(chain)
assert dyn.equal(replayed(x, 100), lifted(x, 100))
print(f"100 tiny ops: replayed {timed(replayed, x, 100):.1f} us a call, lifted {timed(lifted, x, 100):.1f} us")
print("lifted hits:", lifted._state.lifted_hits)
lifted(x, 50)  # n decided the loop: its guard fails, tier 1 records, and a second lift serves n=50
print("entries:", lifted._state.entries, "lifts:", len(lifted._lifts))
for text, where in lifted._lifts[0].guard_lines():
    print("  guard:", text, "  #", where.rsplit("/", 1)[-1])


def noisy(x):
    print("side effect", end="; ")
    return x + 1


cn = dyn.compile(noisy)
for _ in range(2):
    cn(x)
print()
for entry, reason, where in cn.why_python():
    print(f"entry {entry} stays on tier 1: {reason} at {where.rsplit('/', 1)[-1]}")


# A training step lifts whole: the plan writes the parameters and AdamW's state, the call sets
# each .grad, and the loss keeps the body's consumed history. Bit for bit the eager numbers.
def train(compiled):
    dyn.manual_seed(0)
    model = dyn.nn.Sequential(dyn.nn.Linear(8, 32), dyn.nn.GELU(), dyn.nn.Linear(32, 4))
    opt = dyn.optim.AdamW(model.parameters(), lr=1e-2)
    sched = dyn.optim.lr_scheduler.StepLR(opt, 10, 0.5)  # the lr is read at each call: no recompile
    data, target = dyn.randn(64, 8), dyn.randint(0, 4, (64,))

    def step(x, y):
        opt.zero_grad()
        loss = dyn.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    step = dyn.compile(step) if compiled else step
    losses = []
    for _ in range(30):
        losses.append(step(data, target).item())
        sched.step()
    return losses, [p.grad.numpy().tobytes() for p in model.parameters()], step


eager_losses, eager_grads, _ = train(False)
losses, grads, step = train(True)
print(f"training: loss {losses[0]:.4f} -> {losses[-1]:.4f}; {step._state.lifted_hits} of 30 steps skipped the body; "
      f"losses and .grad equal eager's bit for bit: {losses == eager_losses and grads == eager_grads}")
assert losses == eager_losses and grads == eager_grads
