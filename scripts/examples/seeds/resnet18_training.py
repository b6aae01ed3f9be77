# From seeds/000 ("Training"), verbatim but for two fixes the post needs to run at all: it never
# imports `optim`, and it builds the optimizer from `data` instead of the model's parameters (and
# anew each step). Images are 2x3x32x32 so that it runs in seconds; SEED_FULL=1 for 224x224.
import os

import torch
import torchvision
import torch_xla.core.xla_model as xm
from torch import optim  # fix 1

def train_model(model, data, target, optimizer):
  loss_fn = torch.nn.CrossEntropyLoss()
  pred = model(data)
  loss = loss_fn(pred, target)
  loss.backward()
  optimizer.step()
  return pred

def train_model_main(loader):
  device = xm.xla_device()
  xla_resnet18 = torchvision.models.resnet18().to(device)
  xla_resnet18.train()
  dynamo_train_model = torch.compile(
        train_model, backend='openxla')
  xla_optimizer = optim.SGD(xla_resnet18.parameters(), lr=0.1, weight_decay=1e-2)  # fix 2
  for data, target in loader:
    xla_optimizer.zero_grad()
    output = dynamo_train_model(xla_resnet18, data, target, xla_optimizer)
  return output

side = 224 if os.environ.get("SEED_FULL") else 32
torch.manual_seed(0)
loader = [(torch.randn(2, 3, side, side), torch.randint(0, 1000, (2,))) for _ in range(3)]
output = train_model_main(loader)
print(output.shape)
