"""Packages that stand for PyTorch's companions under dynrepl: torchvision, torch_xla, and
torch._dynamo / torch._inductor (see dyn/_torch_finder.py)."""
