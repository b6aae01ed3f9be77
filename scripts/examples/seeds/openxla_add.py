# From seeds/000 ("TorchDynamo(torch.compile) integration in PyTorch XLA"), verbatim.
# Under dynrepl, torch is dyn, xm.xla_device() is dyn's CPU device and backend='openxla' is a dyn
# compile region:  dynrepl --batch scripts/examples/seeds/openxla_add.py
import torch
import torch_xla.core.xla_model as xm

def add(a, b):
  a_xla = a.to(xm.xla_device())
  b_xla = b.to(xm.xla_device())
  return a_xla + b_xla

compiled_code = torch.compile(add, backend='openxla')
print(compiled_code(torch.randn(10), torch.randn(10)))
