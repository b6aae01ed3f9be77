"""affine_grid and grid_sample of dyn.nn.functional (spatial transformer networks), 2-D (4-D
input), composed of dyn's ops so that both are differentiable in the input and in the grid.

grid_sample follows PyTorch's CPU kernel: a grid coordinate in [-1, 1] becomes a pixel position
by (g + 1) * size / 2 - 0.5 (align_corners=False) or (g + 1) * (size - 1) / 2, padding_mode moves
it (border clips, reflection reflects then clips), and bilinear sums the four neighbours
nw, ne, sw, se in that order, each weighted by the area of the opposite rectangle, with the
kernel's operations (w = x - floor(x), e = 1 - w, nw = s * e, ...); a neighbour outside the
input contributes 0. Neighbours are read with one gather over the flattened image."""
import warnings

import dyn

from ._util import check_tensor

_DEFAULT_CHANGED = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                    "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                    "grid_sample for details.")


def _align_corners(align_corners):
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, stacklevel=3)
        return False
    return bool(align_corners)

_MODES = ("bilinear", "nearest")
_PADDING = ("zeros", "border", "reflection")


def _base(steps, align_corners, like):
    """PyTorch's linspace_from_neg_one: the pixel centres of steps pixels in [-1, 1]."""
    if steps <= 1:
        return dyn.zeros(1, dtype=like.dtype)
    r = dyn.linspace(-1.0, 1.0, steps, dtype=like.dtype)
    return r if align_corners else r * (steps - 1) / steps


def affine_grid(theta, size, align_corners=None):
    """The sampling grid [N, H, W, 2] of the affine maps theta [N, 2, 3] for an output of size [N, C, H, W]."""
    check_tensor("affine_grid", "theta", theta)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 5:
        raise NotImplementedError("affine_grid: 3-D (volumetric) grids are not supported by dyn; 4-D sizes are")
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                         f"{theta.shape}.")
    if min(size[2:]) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    align_corners = _align_corners(align_corners)
    n, _, h, w = size
    if theta.shape[0] != n:
        raise ValueError(f"Expected theta to have {n} affine matrices, got {theta.shape[0]}")
    xs = _base(w, align_corners, theta).reshape(1, w).expand(h, w)
    ys = _base(h, align_corners, theta).reshape(h, 1).expand(h, w)
    base = dyn.stack([xs, ys, dyn.ones(h, w, dtype=theta.dtype)], -1).reshape(1, h * w, 3).expand(n, h * w, 3)
    return base.bmm(theta.transpose(1, 2)).reshape(n, h, w, 2)


def _position(g, size, padding_mode, align_corners):
    """Grid coordinates [-1, 1] to pixel positions along a dim of size pixels, in PyTorch's CPU
    kernel's operations (ComputeLocation)."""
    if align_corners:
        x = (g + 1) * ((size - 1) / 2)
        low, twice_span = 0.0, (size - 1) * 2.0
    else:
        x = (g + 1) * (size / 2) - 0.5
        low, twice_span = -0.5, size * 2.0
    if padding_mode == "reflection":
        if align_corners and size <= 1:
            x = dyn.zeros_like(x)
        else:
            a = (x - low).abs()
            extra = a - (a / twice_span).trunc() * twice_span
            x = dyn.minimum(extra, twice_span - extra) + low
    if padding_mode != "zeros":
        x = x.clamp(0, size - 1)
    return x


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input [N, C, H, W] sampled at grid [N, Ho, Wo, 2] (x, y in [-1, 1]): [N, C, Ho, Wo]."""
    check_tensor("grid_sample", "input", input)
    check_tensor("grid_sample", "grid", grid)
    if mode not in _MODES:
        if mode == "bicubic":
            raise NotImplementedError("grid_sample: mode='bicubic' is not supported by dyn (bilinear and nearest "
                                      "are)")
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if input.ndim == 5:
        raise NotImplementedError("grid_sample: 5-D (volumetric) input is not supported by dyn; 4-D input is")
    if input.ndim != 4 or grid.ndim != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size 2 in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    align_corners = _align_corners(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    ix = _position(grid[..., 0], w, padding_mode, align_corners).reshape(n, 1, ho * wo)
    iy = _position(grid[..., 1], h, padding_mode, align_corners).reshape(n, 1, ho * wo)
    flat = input.reshape(n, c, h * w)

    def at(xi, yi):
        """input at integer positions (float tensors), 0 outside."""
        inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        index = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long().expand(n, c, ho * wo)
        values = flat.gather(2, index)
        return dyn.where(inside, values, dyn.zeros_like(values))

    if mode == "nearest":
        out = at(ix.round(), iy.round())
        if grid.requires_grad and dyn.is_grad_enabled():
            # PyTorch gives the grid a zero gradient (not none): a term that is +0 (and so leaves
            # every value's bits alone, -0 too) but depends on the grid
            nothing = dyn.zeros((), dtype=dyn.bool)
            out = out - dyn.where(nothing, ix + iy, dyn.zeros((), dtype=out.dtype))
    else:
        x0, y0 = ix.floor(), iy.floor()
        to_w = ix - x0  # the distances to the west, east, north and south neighbours
        to_e = 1 - to_w
        to_n = iy - y0
        to_s = 1 - to_n
        out = at(x0, y0) * (to_s * to_e) + at(x0 + 1, y0) * (to_s * to_w) + at(x0, y0 + 1) * (to_n * to_e) + \
            at(x0 + 1, y0 + 1) * (to_n * to_w)
    return out.reshape(n, c, ho, wo)

