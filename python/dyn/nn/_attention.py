"""Attention in dyn.nn.functional: scaled_dot_product_attention and multi_head_attention_forward.

Two mask conventions, as in PyTorch: for scaled_dot_product_attention a bool mask is True where a
query MAY attend; for multi-head attention (attn_mask, key_padding_mask) True means masked OUT.
Float masks are added to the scores in both. A row with every key masked gives nan, as PyTorch's
reference computation does.
"""
import math

import dyn

from ._conv import pad
from ._dropout import dropout
from ._linear import linear
from ._util import check_tensor

_NEG_INF = float("-inf")


def _causal_mask(L, S):
    """[L, S] bool, True on and below the diagonal (query i sees keys 0..i)."""
    return dyn.arange(L).reshape(L, 1) >= dyn.arange(S).reshape(1, S)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value over [..., L, E] x [..., S, E] x [..., S, Ev].

    attn_mask: bool (True = may attend) or float (added), broadcast to [..., L, S]; is_causal adds the
    lower-triangular mask; dropout_p drops attention weights (always: pass 0.0 when evaluating)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor("scaled_dot_product_attention", name, t)
    check_tensor("scaled_dot_product_attention", "attn_mask", attn_mask, optional=True)
    L, S = query.shape[-2], key.shape[-2]
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: _scaled_dot_product_attention: Explicit attn_mask should "
                           "not be set when is_causal=True")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key, value = _repeat_heads(key, query.shape[-3]), _repeat_heads(value, query.shape[-3])
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        scores = dyn.where(_causal_mask(L, S), scores, _NEG_INF)
    if attn_mask is not None:
        if attn_mask.dtype == dyn.bool:
            scores = dyn.where(attn_mask, scores, _NEG_INF)
        else:
            scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _repeat_heads(t, heads):
    """[..., Hk, S, E] -> [..., heads, S, E], each key head shared by heads / Hk query heads."""
    hk = t.shape[-3]
    if heads % hk:
        raise RuntimeError(f"scaled_dot_product_attention: {heads} query heads are not a multiple of {hk} key heads")
    lead = tuple(t.shape[:-3])
    expanded = t.unsqueeze(-3).expand(*lead, hk, heads // hk, t.shape[-2], t.shape[-1])
    return expanded.reshape(*lead, heads, t.shape[-2], t.shape[-1])


def _float_mask(name, mask, dtype):
    """A bool mask (True = masked out) as 0 / -inf in dtype; float masks unchanged."""
    if mask is None:
        return None
    check_tensor("multi_head_attention_forward", name, mask)
    if mask.dtype == dyn.bool:
        return dyn.where(mask, dyn.full((), _NEG_INF, dtype=dtype), dyn.zeros((), dtype=dtype))
    if not mask.dtype.is_floating_point:
        raise TypeError(f"only bool and floating types of {name} are supported, got {mask.dtype}")
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention over sequence-first query [L, N, E], key/value [S, N, *] (or unbatched [L, E]).

    Returns (output [L, N, E], weights [N, L, S] averaged over heads, or [N, heads, L, S], or None)."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k / static_v are not supported by dyn")
    batched = query.ndim == 3
    if not batched:
        if query.ndim != 2 or key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
                                 "query tensor")
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")

    if use_separate_proj_weight:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        w_q, w_k, w_v = (in_proj_weight[i * embed_dim:(i + 1) * embed_dim] for i in range(3))
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = (in_proj_bias[i * embed_dim:(i + 1) * embed_dim] for i in range(3))
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    attn_mask = _float_mask("attn_mask", attn_mask, q.dtype)
    key_padding_mask = _float_mask("key_padding_mask", key_padding_mask, q.dtype)
    src_len = k.shape[0]
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")

    def extend_masks(attn_mask, key_padding_mask):  # one more key: nothing masked for it
        return (None if attn_mask is None else pad(attn_mask, (0, 1)),
                None if key_padding_mask is None else pad(key_padding_mask, (0, 1)))

    if bias_k is not None and bias_v is not None:
        k = dyn.cat([k, bias_k.expand(1, bsz, embed_dim)], 0)
        v = dyn.cat([v, bias_v.expand(1, bsz, embed_dim)], 0)
        attn_mask, key_padding_mask = extend_masks(attn_mask, key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # [len, N, E] -> [N * heads, len, head_dim]
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = dyn.cat([k, dyn.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype)], 1)
        v = dyn.cat([v, dyn.zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype)], 1)
        attn_mask, key_padding_mask = extend_masks(attn_mask, key_padding_mask)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = scores.softmax(-1)
    if training and dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    out = (weights @ v).transpose(0, 1).reshape(tgt_len, bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return (out if batched else out.squeeze(1)), None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        return out.squeeze(1), weights.squeeze(0)
    return out, weights
