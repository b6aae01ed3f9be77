"""linear, bilinear, embedding, embedding_bag and one_hot of dyn.nn.functional."""
import _dyn
import dyn

from ._util import check_tensor, tracing


def linear(input, weight, bias=None):
    check_tensor("linear", "input", input)
    check_tensor("linear", "weight", weight)
    check_tensor("linear", "bias", bias, optional=True)
    ac = _dyn.autocast_dtype()
    if ac is not None:  # torch.autocast: linear is on its lower-precision list
        input, weight, bias = (t.to(ac) if t is not None and t.dtype == dyn.float32 else t for t in (input, weight, bias))
    half = input.dtype in _REDUCED and bias is not None and bias.dtype == input.dtype == weight.dtype
    if half:
        # PyTorch adds the bias inside its float32 accumulation (addmm) and rounds once: a float16
        # product rounded before the bias is added would differ in the last bit.
        dtype, input, weight, bias = input.dtype, input.float(), weight.float(), bias.float()
    if half:  # its own float32 product: autocast would round the operands back to 16 bits
        out = _dyn._matmul(input, weight.t() if weight.ndim == 2 else weight) + bias
        return out.to(dtype)
    out = input @ weight.t() if weight.ndim == 2 else input @ weight
    if bias is not None:
        out = out + bias
    return out


_REDUCED = (dyn.float16, dyn.bfloat16)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of weight picked by the int64 indices in input; the padding_idx row gets no gradient."""
    check_tensor("embedding", "input", input)
    check_tensor("embedding", "weight", weight)
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported by dyn")
    out = weight[input]
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += weight.shape[0]
        keep = (input != padding_idx).unsqueeze(-1)
        out = dyn.where(keep, out, out.detach())
    return out


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape tensor.shape + (num_classes,), 1 at each index (num_classes=-1: max + 1)."""
    check_tensor("one_hot", "tensor", tensor)
    if tensor.dtype != dyn.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor (dyn.int64), "
                           f"got {tensor.dtype}")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.amax()) + 1  # reads the data: a graph break inside dyn.compile
    if tensor.numel() > 0 and not tracing():
        if int(tensor.amin()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor.amax()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = dyn.arange(num_classes)
    return (tensor.unsqueeze(-1) == classes).long()


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = input1 A[o] input2 (+ bias[o]) for weight A [out, in1, in2]."""
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        check_tensor("bilinear", name, t)
    check_tensor("bilinear", "bias", bias, optional=True)
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {weight.ndim} dimensions")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    o, i1, i2 = weight.shape
    # (x1 A) then the row-wise product with x2, as PyTorch's _trilinear contracts
    t = (x1 @ weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, o)


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sum, mean or max of the embeddings of each bag: the rows of a 2-D input, or the runs of a
    1-D input that offsets start. An empty bag (or one of padding only) gives zeros."""
    check_tensor("embedding_bag", "input", input)
    check_tensor("embedding_bag", "weight", weight)
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None or scale_grad_by_freq:
        raise NotImplementedError("embedding_bag: max_norm and scale_grad_by_freq are not supported by dyn")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if input.dtype not in (dyn.int64, dyn.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.dtype} instead")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type Tensor")
        bags, length = input.shape
        offsets = dyn.arange(0, bags * length, length) if length else dyn.zeros(bags, dtype=dyn.int64)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    input, offsets = input.long(), offsets.long()
    if include_last_offset:
        offsets = offsets[:-1]
    bags = offsets.shape[0]
    count = input.shape[0]
    # the bag of each index: how many offsets are at or before its position, less one
    bag = (dyn.arange(count).unsqueeze(1) >= offsets.unsqueeze(0)).long().sum(1) - 1
    keep = dyn.ones(count, dtype=dyn.bool)
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += weight.shape[0]
        keep = input != padding_idx
    rows = weight.index_select(0, input)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    width = weight.shape[1]
    if mode == "max":
        fill = dyn.full_like(rows, -float("inf"))
        picked = dyn.where(keep.unsqueeze(1), rows, fill)
        out = dyn.full((bags, width), -float("inf"), dtype=weight.dtype)
        out = out.scatter_reduce(0, bag.unsqueeze(1).expand(count, width), picked, "amax", include_self=True)
        return dyn.where(out == -float("inf"), dyn.zeros_like(out), out)
    rows = dyn.where(keep.unsqueeze(1), rows, dyn.zeros_like(rows))
    out = dyn.zeros(bags, width, dtype=weight.dtype).index_add(0, bag, rows)
    if mode == "mean":
        n = dyn.zeros(bags, dtype=weight.dtype).index_add(0, bag, keep.to(weight.dtype))
        out = out / n.clamp(min=1).unsqueeze(1)
    return out
