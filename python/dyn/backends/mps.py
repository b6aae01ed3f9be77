"""torch.backends.mps: no Metal device under dyn."""


def is_available():
    return False


def is_built():
    return False
