"""cosine_similarity and pairwise_distance of dyn.nn.functional."""
from ._util import check_tensor


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1 . x2 / (max(||x1||, eps) * max(||x2||, eps)) along dim (inputs broadcast)."""
    check_tensor("cosine_similarity", "x1", x1)
    check_tensor("cosine_similarity", "x2", x2)
    n1 = (x1 * x1).sum(dim).sqrt().clamp(min=eps)
    n2 = (x2 * x2).sum(dim).sqrt().clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    check_tensor("pairwise_distance", "x1", x1)
    check_tensor("pairwise_distance", "x2", x2)
    d = (x1 - x2 + eps).abs()
    if p == float("inf"):
        return d.amax(-1, keepdim=keepdim)
    return d.pow(p).sum(-1, keepdim=keepdim).pow(1.0 / p)
