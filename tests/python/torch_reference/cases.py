"""Calls of torch.functional's and the search / counting functions, run by PyTorch 2.15 to record
functional.json (record.py) and by dyn to compare with it (test_functional_reference.py)."""


def cases(torch):
    """name -> result (a tensor, a tuple of tensors, a Size) of each call, with torch being either."""
    torch.manual_seed(0)
    x = torch.tensor([[3., 1., 2., 5.], [0., -1., 4., 4.]])
    r = {}

    def rec(k, v):
        r[k] = v

    rec("broadcast_shapes", torch.broadcast_shapes(3, (2, 1)))
    rec("broadcast_tensors", torch.broadcast_tensors(torch.ones(3), torch.zeros(2, 1)))
    rec("broadcast_to", torch.arange(3).broadcast_to((2, 3)))
    rec("unflatten", torch.arange(12).unflatten(0, (3, -1)))
    rec("unflatten2", x.unflatten(1, (2, 2)))
    rec("count_nonzero", torch.count_nonzero(x))
    rec("count_nonzero_d", x.count_nonzero(1))
    rec("isin", torch.isin(torch.tensor([[1, 2], [3, 4]]), torch.tensor([2, 3])))
    rec("isin_inv", torch.isin(torch.tensor([1, 2, 3]), 2, invert=True))
    rec("take_along_dim", torch.take_along_dim(x, torch.tensor([[0], [2]]), dim=1))
    rec("take_along_dim_b", torch.take_along_dim(x, torch.tensor([[1, 0]]), dim=1))
    rec("take_along_dim_none", torch.take_along_dim(x, torch.tensor([7, 0, 5])))
    rec("masked_select", torch.masked_select(x, torch.tensor([True, False, True, False])))
    rec("kthvalue", torch.kthvalue(x, 2, 1))
    rec("kthvalue_k", x.kthvalue(2, 0, keepdim=True))
    rec("kthvalue_ties", torch.kthvalue(torch.tensor([2., 1., 2., 1.]), 2))
    rec("searchsorted", torch.searchsorted(torch.tensor([1., 3., 5., 7.]),
                                          torch.tensor([[3., 6., 9.], [0., 5., 1.]])))
    rec("searchsorted_r", torch.searchsorted(torch.tensor([1., 3., 5., 7.]), torch.tensor([3., 6.]), right=True))
    rec("searchsorted_side", torch.searchsorted(torch.tensor([[1., 3.], [2., 4.]]), torch.tensor([[3.], [3.]]), side="right"))
    rec("searchsorted_scalar", torch.searchsorted(torch.tensor([1., 3., 5.]), 4.0))
    rec("bucketize", torch.bucketize(torch.tensor([[1., 6.], [9., 3.]]), torch.tensor([1., 3., 5., 7.])))
    rec("bucketize_r", torch.bucketize(torch.tensor([1., 6.]), torch.tensor([1., 3., 5., 7.]), right=True))
    q = torch.tensor([[0.5, 2.0, 7.0, 1.0, 3.0]], dtype=torch.float64)
    rec("quantile", torch.quantile(q, 0.3))
    rec("quantile_v", torch.quantile(q, torch.tensor([0.0, 0.25, 0.6, 1.0], dtype=torch.float64), dim=1,
                                     keepdim=True))
    for interp in ("lower", "higher", "nearest", "midpoint"):
        rec("quantile_" + interp, torch.quantile(q, 0.4, dim=1, interpolation=interp))
    rec("quantile_nan", torch.quantile(torch.tensor([1., float("nan"), 3.]), 0.5))
    rec("histc", torch.histc(torch.tensor([1., 2., 1., 4., 2.5, 0.]), bins=4, min=0, max=3))
    rec("histc_auto", torch.histc(torch.tensor([1., 2., 1., 4.]), bins=3))
    rec("tensordot", torch.tensordot(torch.arange(24.).reshape(2, 3, 4), torch.arange(12.).reshape(4, 3),
                                     dims=([1, 2], [1, 0])))
    rec("tensordot1", torch.tensordot(torch.arange(6.).reshape(2, 3), torch.arange(12.).reshape(3, 4), dims=1))
    a = torch.tensor([[0., 0.], [3., 4.], [1., 1.]])
    b = torch.tensor([[0., 0.], [1., 2.]])
    for p in (2.0, 1.0, 0.0, float("inf"), 3.0):
        rec(f"cdist_{p}", torch.cdist(a, b, p=p))
    # edges found in review: a float32 q's rank (nearest), NaN values sorted last, histc's float32
    # bin edges, an empty isin, the large-argument hyperbolic functions
    rec("quantile_nearest_f32", torch.quantile(torch.arange(4.), 1 / 6, interpolation="nearest"))
    rec("quantile_f32_ranks", torch.quantile(torch.tensor([0., 1, 2, 3, 4, 5, 6, 8]),
                                             torch.tensor([0.0, 0.5, 1.0]), interpolation="lower"))
    rec("searchsorted_nan", torch.searchsorted(torch.tensor([1., 3, 5, 7, 9]), torch.tensor([float("nan"), 4.]),
                                               right=True))
    rec("histc_edges", torch.histc(torch.arange(3000.) / 1000, 10, 0, 1))
    rec("isin_empty", torch.isin(torch.zeros(0, 2), torch.tensor([1.])))
    rec("lerp_halves", torch.lerp(torch.tensor([2., -1., 0.]), torch.tensor([3., 5., 1.]), 0.8))
    # several tensor indices in one expression: pointwise, broadcast, placed as NumPy / PyTorch
    g = torch.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    i = torch.tensor([[0, 1], [1, 0]])
    j = torch.tensor([2, -1])
    rec("index_i_colon_j", g[i, :, j])
    rec("index_colon_i_j", g[:, i, j])
    rec("index_i_j", g[i, j])
    rec("index_int_i_colon_j", g[0, i, :, j])
    rec("index_ellipsis_i_j", g[..., i, j])
    rec("index_none_i_j", g[None, i, j])
    rec("index_lists", g[[0, 1], [2, 0]])
    rec("index_three", g[i, j, j])
    # einsum with '...': right-aligned, broadcast, summed when not in the output
    e1, e2, e3 = torch.arange(24.).reshape(2, 3, 4), torch.arange(20.).reshape(4, 5), torch.arange(40.).reshape(2, 4, 5)
    for k, (eq, ops) in enumerate([("...ij,jk->...ik", (e1, e2)), ("...ij,...jk->...ik", (e1, e3)),
                                   ("...ij,jk", (e1, e2)), ("i...,i...->...", (e1, e1)),
                                   ("...ii->...i", (torch.arange(18.).reshape(2, 3, 3),)), ("b...,b...->b", (e1, e1)),
                                   ("...ij,...jk->...ik", (torch.ones(1, 3, 4), e3)), ("ij...->ji...", (e1,)),
                                   ("...ij,jk->ik", (e1, e2))]):
        rec(f"einsum_{k}", torch.einsum(eq, *ops))
    return r


def encode(torch, v):
    """A result as JSON: [dtype, shape, values] for a tensor (NaN as the string "nan"), lists for
    tuples and sizes."""
    if isinstance(v, torch.Tensor):
        vals = v.tolist()

        def clean(o):
            if isinstance(o, list):
                return [clean(e) for e in o]
            return "nan" if isinstance(o, float) and o != o else o
        return [str(v.dtype).split(".")[-1], list(v.shape), clean(vals)]
    if isinstance(v, torch.Size):
        return list(v)
    if isinstance(v, tuple):
        return [encode(torch, e) for e in v]
    return v
