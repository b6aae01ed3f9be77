"""In-place ops in a model that trains: the autograd history of each write.

Run it with:  build/repl/dynrepl scripts/examples/inplace_autograd.py
then try      :graph step[0]    :why-python step

A small recurrent model written the way PyTorch code often is: the hidden states are assigned
into a preallocated buffer (out[:, t] = h), the residual is added in place (y += x), and the
activations are nn.ReLU(inplace=True). Each write gets autograd history as in PyTorch (the
buffer's grad_fn is CopySlices), so the gradients are those of the out-of-place program. The
same step runs eagerly and compiled: the losses and parameters are bitwise equal. A compiled
function whose body writes history in place runs its body on every call (:why-python says why).
"""
import torch
import torch.nn as nn


class Recurrent(nn.Module):
    def __init__(self, n_in=8, n_hidden=16, n_out=4):
        super().__init__()
        self.inp = nn.Linear(n_in, n_hidden)
        self.rec = nn.Linear(n_hidden, n_hidden)
        self.act = nn.ReLU(inplace=True)
        self.head = nn.Linear(n_hidden, n_out)

    def forward(self, x):  # x: (batch, time, n_in)
        b, t, _ = x.shape
        h = torch.zeros(b, self.rec.out_features)
        out = torch.zeros(b, t, self.rec.out_features)
        for i in range(t):
            y = self.inp(x[:, i])
            y += self.rec(h)  # the residual, in place
            h = self.act(y)
            out[:, i] = h  # into the buffer: out takes the write's history
        return self.head(out.mean(1))


def train(compiled, steps=5):
    torch.manual_seed(0)
    model = Recurrent()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, target = torch.randn(4, 6, 8), torch.randint(0, 4, (4,))

    def step(x, target):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        return loss

    run = torch.compile(step) if compiled else step
    losses = [run(x, target).item() for _ in range(steps)]
    return losses, model.state_dict()


eager, eager_state = train(compiled=False)
compiled, compiled_state = train(compiled=True)
print("losses:", [round(v, 5) for v in eager])
assert eager == compiled, (eager, compiled)
assert all(torch.equal(eager_state[k], compiled_state[k]) for k in eager_state)
print("compiled == eager, bit for bit, with in-place writes in the model")
