"""Dropout of elements (dropout) and of whole channels (dropout1d, dropout2d) in dyn.nn.functional."""
import warnings

import dyn

from ._util import check_tensor


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _drop(input, p, mask_shape, inplace):
    if p == 1.0:
        out = input * 0.0
    else:
        keep = dyn.rand(*mask_shape, dtype=input.dtype) >= p if mask_shape else dyn.rand_like(input) >= p
        out = input * keep * (1.0 / (1.0 - p))
    return input.copy_(out) if inplace else out


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by 1 / (1 - p) (identity unless training)."""
    check_tensor("dropout", "input", input)
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _drop(input, p, None, inplace)


def _channel_dropout(input, p, training, inplace, lead):
    """Drops whole channels: one draw per index of the first `lead` dims."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    mask_shape = tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)
    return _drop(input, p, mask_shape, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of [N, C, L] (or unbatched [C, L]) input with probability p."""
    check_tensor("dropout1d", "input", input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, 2 if input.ndim == 3 else 1)


def _feature_dropout(input, p, training, inplace):
    """PyTorch's feature dropout: one draw per (sample, channel), the first two dims."""
    _check_p(p)
    # As PyTorch's feature dropout: these need no draw, so no rank either.
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _drop(input, p, tuple(input.shape[:2]) + (1,) * (input.ndim - 2), inplace)


def _deprecated_rank(fn, ndim, spatial, ranks):
    warnings.warn(f"{fn}: Received a {ndim}-D input to {fn}, which is deprecated and will result in an error in a "
                  "future release. To retain the behavior and silence this warning, please use dropout instead. "
                  f"Note that {fn} exists to provide channel-wise dropout on inputs with {spatial} spatial "
                  "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                  f"{ranks[0]}D or {ranks[1]}D inputs).", stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of [N, C, H, W] input with probability p.

    As in PyTorch, a 3-D input is read as [N, C, L] (1-D channel dropout), with a warning; other
    ranks warn that they are deprecated and drop per (first dim, second dim)."""
    check_tensor("dropout2d", "input", input)
    _check_p(p)
    if input.ndim not in (3, 4):
        _deprecated_rank("dropout2d", input.ndim, 2, (3, 4))
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of [N, C, D, H, W] (or unbatched [C, D, H, W]) input with probability p."""
    check_tensor("dropout3d", "input", input)
    _check_p(p)
    if input.ndim not in (4, 5):
        _deprecated_rank("dropout3d", input.ndim, 3, (4, 5))
    if input.ndim == 5:
        return _feature_dropout(input, p, training, inplace)
    # Unbatched (and, deprecated, any other rank): one sample; in place writes through the view.
    return _feature_dropout(input.unsqueeze(0), p, training, inplace).squeeze(0)
