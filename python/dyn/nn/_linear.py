"""linear, embedding and one_hot of dyn.nn.functional."""
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
