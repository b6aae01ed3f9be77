# From seeds/000 ("Inference"), the function verbatim; the loader below is ours (the post leaves
# it out). Images are 2x3x64x64 instead of ImageNet's 224x224 so that it runs in seconds; set
# SEED_FULL=1 for 224x224. `:graphs` after the run shows one cached graph, hit on every batch.
import os

import torch
import torchvision
import torch_xla.core.xla_model as xm

def eval_model(loader):
  device = xm.xla_device()
  xla_resnet18 = torchvision.models.resnet18().to(device)
  xla_resnet18.eval()
  dynamo_resnet18 = torch.compile(
    xla_resnet18, backend='openxla')
  for data, _ in loader:
    with torch.no_grad():
      output = dynamo_resnet18(data)
  return output

side = 224 if os.environ.get("SEED_FULL") else 64
torch.manual_seed(0)
loader = [(torch.randn(2, 3, side, side), torch.randint(0, 1000, (2,))) for _ in range(3)]
output = eval_model(loader)
print(output.shape, f"{output.abs().mean():.4f}")
