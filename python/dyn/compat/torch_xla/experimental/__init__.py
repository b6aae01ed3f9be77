"""torch_xla.experimental: eager_mode(True) is how dyn always runs outside compile regions."""
_eager = [False]


def eager_mode(enable):
    """dyn runs ops eagerly outside compile regions either way; the flag is recorded."""
    _eager[0] = bool(enable)


def is_eager_mode():
    return _eager[0]
