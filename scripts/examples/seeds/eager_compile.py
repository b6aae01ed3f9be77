# From seeds/002 ("eager and compile"), verbatim: eager mode by default, torch_xla.compile for the
# model and for a training step. The batch is 2x3x64x64 instead of 64x3x224x224 so that it runs in
# seconds (SEED_FULL=1 for the original). The model and data below the seed's lines are ours.
import os

import torch
import torch_xla
import torchvision

# Run ops eagerly by default
torch_xla.experimental.eager_mode(True)

device = torch_xla.device()
model = torchvision.models.resnet18().to(device)

# Mark the function to be compiled
compiled_model = torch_xla.compile(model)
n, side = (64, 224) if os.environ.get("SEED_FULL") else (2, 64)
input = torch.randn(n, 3, side, side).to(device)

# Compilation and execution happens right away.
res = compiled_model(input)
print(res.shape)

# Inference
torch_xla.experimental.eager_mode(True)

compiled_model = torch.compile(model, backend="openxla")

# Training
torch_xla.experimental.eager_mode(True)

def step_fn(model, data, target, loss_fn, optimizer):
    optimizer.zero_grad()
    logits = model(data)
    loss = loss_fn(logits, target)
    loss.backward()
    optimizer.step()
    return loss

step_fn = torch_xla.compile(step_fn)

loss_fn = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
target = torch.randint(0, 1000, (n,))
for step in range(3):
    loss = step_fn(model, input, target, loss_fn, optimizer)
    print(f"step {step}: loss {loss:.4f}")
