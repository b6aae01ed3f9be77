"""torch.backends.mkl: reported unavailable (dyn has its own CPU kernels)."""


def is_available():
    return False
