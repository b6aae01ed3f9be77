"""Functions added to dyn's namespace, Tensor methods and nn.functional losses and activations
(python/dyn/_composites.py, nn/_loss_margin.py, nn/_activation.py): values, gradients and errors.
Run by PyTorch 2.15 to record api.json (record.py) and by dyn to compare with it
(test_api_extras.py)."""
import math

from reference import encode_value, recorder


def _grads(torch, f, *arrays, wrap=None):
    xs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out = (wrap(f) if wrap else f)(*xs)
    w = torch.arange(1.0, out.numel() + 1, dtype=out.dtype).reshape(out.shape) / out.numel()
    (out * w).sum().backward()
    return (out.detach(),) + tuple(x.grad if x.grad is not None else "none" for x in xs)


def cases(torch, wrap=None):
    r = {}
    rec = recorder(r)
    F = torch.nn.functional
    X = [[1.0, -2.0, 0.0, 0.5], [-0.0, 3.5, -1.25, 2.0]]
    Y = [[0.5, 1.0, -2.0, 3.0], [2.0, -0.5, 1.5, -1.0]]
    P = [[0.25, 0.5, 0.75, 0.125], [0.9, 0.1, 0.6, 0.3]]
    nan = float("nan")
    g = lambda f, *a: _grads(torch, f, *a, wrap=wrap)  # noqa: E731

    rec("copysign", lambda: g(lambda x, y: torch.copysign(x, y), X, Y))
    rec("copysign_scalar", lambda: torch.copysign(torch.tensor(X), -0.0))
    rec("signbit", lambda: torch.signbit(torch.tensor(X)))
    rec("xlogy", lambda: g(lambda x, y: torch.xlogy(x, y.abs()), X, Y))
    rec("xlogy_nan", lambda: torch.xlogy(torch.tensor([0.0, 1.0, 0.0]), torch.tensor([nan, 2.0, 0.0])))
    rec("sinc", lambda: g(torch.sinc, X))
    rec("heaviside", lambda: torch.heaviside(torch.tensor(X), torch.tensor(0.5)))
    rec("logit", lambda: g(lambda p: torch.logit(p), P))
    rec("logit_eps", lambda: torch.logit(torch.tensor([0.0, 0.5, 1.0]), eps=1e-3))
    rec("float_power", lambda: torch.float_power(torch.tensor([2, 3]), 2))
    rec("logaddexp2", lambda: g(torch.logaddexp2, X, Y))
    rec("nansum", lambda: (torch.nansum(torch.tensor([[1.0, nan], [2.0, 3.0]])),
                           torch.nansum(torch.tensor([[1.0, nan], [2.0, 3.0]]), 1)))
    rec("nanmean", lambda: torch.nanmean(torch.tensor([[1.0, nan], [2.0, 3.0]]), 1))
    rec("nanmean_int", lambda: torch.nanmean(torch.tensor([1, 2])))
    rec("diff", lambda: (torch.diff(torch.tensor([1, 4, 9, 16])), torch.diff(torch.tensor(X), n=2),
                         torch.diff(torch.tensor(X), dim=0, prepend=torch.zeros(1, 4))))
    rec("diff_grad", lambda: g(lambda x: torch.diff(x, dim=1), X))
    rec("logcumsumexp", lambda: g(lambda x: torch.logcumsumexp(x, 1), X))
    rec("cov", lambda: g(torch.cov, P))
    rec("cov_weights", lambda: torch.cov(torch.tensor(P), correction=0, fweights=torch.tensor([1, 2, 1, 3]),
                                         aweights=torch.tensor([0.5, 1.0, 2.0, 1.0])))
    rec("corrcoef", lambda: g(torch.corrcoef, P))
    rec("tril_triu_indices", lambda: (torch.tril_indices(3, 4), torch.triu_indices(3, 3, 1),
                                      torch.tril_indices(4, 3, -1)))
    src, idx = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0, 1, 0, 1, 2, 1]
    for red in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            rec(f"scatter_reduce_{red}_{inc}", lambda: g(
                lambda b, s: b.scatter_reduce(0, torch.tensor(idx), s, red, include_self=inc), [1.0, 2.0, 3.0, 4.0],
                src))
    rec("scatter_reduce_2d", lambda: torch.tensor(X).scatter_reduce(1, torch.tensor([[0, 0, 1], [3, 3, 3]]),
                                                                    torch.tensor(Y)[:, :3], "amax"))
    rec("index_fill", lambda: g(lambda x: x.index_fill(1, torch.tensor([0, 2]), -1.0), X))
    rec("index_copy", lambda: g(lambda x, s: x.index_copy(0, torch.tensor([1, 0]), s), X, Y))
    rec("masked_scatter", lambda: g(lambda x, s: x.masked_scatter(torch.tensor(X) > 0, s), X, Y))
    rec("take", lambda: g(lambda x: torch.take(x, torch.tensor([[0, 5], [2, 7]])), X))
    rec("unfold", lambda: g(lambda x: x.unfold(1, 2, 1), X))
    rec("unfold_step", lambda: torch.arange(7.0).unfold(0, 3, 2))
    rec("atleast", lambda: (torch.atleast_1d(torch.tensor(1.0)).shape, torch.atleast_2d(torch.ones(3)).shape,
                            torch.atleast_3d(torch.ones(2, 3)).shape, torch.atleast_3d(torch.ones(3)).shape,
                            [t.shape for t in torch.atleast_2d(torch.tensor(1.0), torch.ones(2))]))
    rec("kron", lambda: g(torch.kron, [[1.0, 2.0], [3.0, 4.0]], [[0.0, 1.0], [1.0, 0.5]]))
    rec("rot90", lambda: tuple(torch.rot90(torch.tensor(X), k) for k in (1, 2, 3, -1, 4)))
    rec("addmv_addr", lambda: (torch.addmv(torch.ones(2), torch.tensor(X), torch.tensor(P[0]), beta=2, alpha=0.5),
                               torch.addr(torch.zeros(2, 2), torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))))
    rec("windows", lambda: (torch.hann_window(5), torch.hann_window(6, periodic=False), torch.hamming_window(4),
                            torch.bartlett_window(5), torch.bartlett_window(6, periodic=False),
                            torch.blackman_window(7), torch.hann_window(4, dtype=torch.float64)))
    # losses and activations
    T = [1.0, -1.0, 1.0, -1.0]
    rec("margin_ranking_loss", lambda: g(lambda a, b: F.margin_ranking_loss(a, b, torch.tensor(T), margin=0.5),
                                         X[0], Y[0]))
    rec("hinge_embedding_loss", lambda: g(lambda a: F.hinge_embedding_loss(a, torch.tensor([T, T]), reduction="sum"),
                                          X))
    rec("soft_margin_loss", lambda: g(lambda a: F.soft_margin_loss(a, torch.tensor([T, T])), X))
    rec("multilabel_soft_margin_loss", lambda: g(lambda a: F.multilabel_soft_margin_loss(
        a, torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0]]), weight=torch.tensor([1.0, 2.0, 0.5, 1.0])), X))
    rec("multi_margin_loss", lambda: g(lambda a: F.multi_margin_loss(a, torch.tensor([1, 3])), X))
    rec("multi_margin_loss_p2", lambda: g(lambda a: F.multi_margin_loss(a, torch.tensor([0, 2]), p=2, margin=0.5,
                                                                        weight=torch.tensor([1.0, 2.0, 3.0, 4.0],
                                                                                            dtype=torch.float64),
                                                                        reduction="none"), X))
    rec("cosine_embedding_loss", lambda: g(lambda a, b: F.cosine_embedding_loss(a, b, torch.tensor([1, -1]),
                                                                                margin=0.1), X, Y))
    rec("triplet_margin_loss", lambda: g(lambda a, p, n: F.triplet_margin_loss(a, p, n, swap=True), X, Y, P))
    rec("poisson_nll_loss", lambda: g(lambda a: F.poisson_nll_loss(a, torch.tensor([[1.0, 2.0, 0.0, 3.0]] * 2)), X))
    rec("poisson_nll_loss_full", lambda: g(lambda a: F.poisson_nll_loss(a.abs() + 0.1, torch.tensor([[1.0, 2.0, 0.0,
                                                                                                    3.0]] * 2),
                                                                        log_input=False, full=True), X))
    rec("gaussian_nll_loss", lambda: g(lambda a, v: F.gaussian_nll_loss(a, torch.tensor(Y), v.abs(), full=True),
                                       X, P))
    rec("gaussian_nll_loss_var_shape", lambda: F.gaussian_nll_loss(torch.tensor(X), torch.tensor(Y),
                                                                   torch.ones(2)))
    rec("error_gaussian_nll_negative", lambda: F.gaussian_nll_loss(torch.tensor(X), torch.tensor(Y),
                                                                   -torch.ones(2, 4)))
    rec("shrinks", lambda: (g(F.tanhshrink, X), g(lambda a: F.hardshrink(a, 0.75), X),
                            g(lambda a: F.softshrink(a, 0.75), X)))
    rec("rrelu_eval", lambda: g(lambda a: F.rrelu(a), X))
    rec("softmax2d", lambda: torch.nn.Softmax2d()(torch.tensor([X, Y])))
    rec("module_reprs", lambda: [repr(m) for m in (torch.nn.Hardshrink(0.3), torch.nn.RReLU(), torch.nn.Tanhshrink(),
                                                   torch.nn.MarginRankingLoss(0.2), torch.nn.TripletMarginLoss(),
                                                   torch.nn.UpsamplingBilinear2d(scale_factor=2))])
    rec("upsampling_bilinear2d", lambda: torch.nn.UpsamplingBilinear2d(scale_factor=2)(torch.tensor([[X]])))
    rec("error_softshrink", lambda: F.softshrink(torch.tensor(X), -1.0))
    rec("error_multi_margin_p", lambda: torch.nn.MultiMarginLoss(p=3))
    # clamp with tensor bounds: values, promotion, NaN bounds, the gradient to input and to each bound
    rec("clamp_tensor_bounds", lambda: g(lambda x, lo, hi: torch.clamp(x, lo, hi), X, [[0.0] * 4, [-1.0] * 4],
                                         [[0.75] * 4, [2.5] * 4]))
    rec("clamp_tensor_min_only", lambda: g(lambda x, lo: x.clamp(min=lo), X, Y))
    rec("clip_tensor_max_scalar_min", lambda: torch.clip(torch.tensor(X), -1.0, torch.tensor(Y)))
    rec("clamp_tensor_promotes", lambda: torch.clamp(torch.tensor([1, 5, 9]), torch.tensor([2, 2, 2]),
                                                     torch.tensor([4.5, 6.0, 7.0])))
    rec("clamp_tensor_nan_bound", lambda: torch.clamp(torch.tensor([1.0, 5.0]), min=torch.tensor([nan, 0.0])))
    rec("clamp_tensor_inplace", lambda: torch.tensor(X).clamp_(max=torch.tensor(Y)))
    _ = math
    return r


def encode(torch, v):
    return encode_value(torch, v)
