"""The margin, embedding and likelihood losses of dyn.nn.functional (margin_ranking, hinge_embedding,
soft_margin, multilabel_soft_margin, multi_margin, cosine_embedding, triplet_margin, poisson_nll,
gaussian_nll), in PyTorch 2.15's formulas, composed of dyn's ops."""
import math

import dyn

from ._activation import logsigmoid
from ._distance import pairwise_distance
from ._util import legacy_reduction, reduce_loss


def _zero(x):
    return dyn.zeros((), dtype=x.dtype)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    loss = (-target * (input1 - input2) + margin).relu()  # (PyTorch's clamp_min_: no gradient at 0)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    z = _zero(input)
    loss = dyn.where(target != 1, (margin - input).relu(), z) + dyn.where(target != -1, input, z)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    loss = (1 + (-target * input).exp()).log()
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input.shape[-1]
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = target.reshape(-1)
    picked = x.gather(1, t.unsqueeze(1))
    z = (margin - picked + x).clamp(min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[t].unsqueeze(1)
    not_target = dyn.arange(x.shape[1]).unsqueeze(0) != t.unsqueeze(1)
    loss = dyn.where(not_target, z, _zero(z)).sum(1) / x.shape[1]
    loss = loss if input.dim() == 2 else loss.squeeze(0)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    eps = 1e-12  # PyTorch's EPSILON, added to each squared magnitude
    d = input1.dim() - 1
    prod = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + eps
    mag2 = (input2 * input2).sum(d) + eps
    cos = prod / (mag1 * mag2).sqrt()
    z = _zero(cos)
    loss = dyn.where(target == 1, 1 - cos, z) + dyn.where(target == -1, (cos - margin).relu(), z)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    if not (anchor.dim() == positive.dim() == negative.dim()):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative "
                           f"{negative.dim()}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = dyn.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = (margin + d_pos - d_neg).clamp(min=0)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + dyn.where(target > 1, stirling, _zero(stirling))
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, (int, float)):
        var = dyn.full(input.shape, float(var), dtype=input.dtype)
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with dyn.no_grad():
        var.clamp_(min=eps)  # (a clamp the gradient does not see, as PyTorch's)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)
