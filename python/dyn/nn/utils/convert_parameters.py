"""parameters_to_vector and vector_to_parameters."""
import dyn


def parameters_to_vector(parameters):
    """One 1-D tensor: every parameter flattened, concatenated in order."""
    return dyn.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of the 1-D vec into the parameters (in place)."""
    if not isinstance(vec, dyn.Tensor):
        raise TypeError(f"expected dyn.Tensor, but got: {type(vec).__name__}")
    parameters = list(parameters)
    total = sum(p.numel() for p in parameters)
    if vec.ndim != 1 or vec.numel() != total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of {total} elements, got shape "
                           f"{list(vec.shape)}")
    offset = 0
    with dyn.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(tuple(p.shape)))
            offset += n
