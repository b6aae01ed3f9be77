"""dyn.backends (torch.backends): flags programs set for CUDA, cuDNN and MPS; none exist here."""
from . import cudnn, mps, cuda, mkldnn, openmp, mkl  # noqa: F401
