"""torch_xla.runtime: one CPU device."""


def device_type():
    return "CPU"


def world_size():
    return 1


def global_ordinal():
    return 0


def local_ordinal():
    return 0


def use_spmd():
    raise NotImplementedError("torch_xla SPMD is not supported by dyn (one CPU device)")
