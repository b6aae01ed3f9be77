"""torch.backends.cudnn: no cuDNN under dyn; the flags are accepted and kept."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
