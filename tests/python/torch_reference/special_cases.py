"""torch.special and the gamma family (lgamma, digamma, polygamma, mvlgamma, erfinv), and
nn.functional's affine_grid, grid_sample, fold, local_response_norm, bilinear and embedding_bag
with their modules: values, gradients, reprs and errors on fixed inputs. Run by PyTorch 2.15 to
record special.json (record.py) and by dyn to compare with it (test_special.py). Special
functions are evaluated by other series than PyTorch's kernels (see dyn/special.py), and the
samplers sum in another order, so floats are compared to a relative tolerance."""
import numpy as np

from reference import encode_value, recorder


def cases(torch, wrap=None):
    r = {}
    rec = recorder(r)
    F = torch.nn.functional
    S = torch.special
    call = wrap or (lambda f: f)

    def grad_of(f, *arrays, dtype=torch.float64):
        """f's value and each input's gradient of (f * weights).sum()."""
        xs = [torch.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
        out = call(f)(*xs)
        loss = (out * torch.arange(1.0, out.numel() + 1, dtype=out.dtype).reshape(out.shape) / out.numel()).sum()
        loss.backward()
        return (out.detach(),) + tuple(x.grad for x in xs)

    pos = [0.05, 0.1, 0.5, 0.9, 1.0, 1.5, 2.0, 2.5, 3.7, 7.9, 12.5, 30.0, 150.0, 1e4]
    neg = [-0.5, -1.5, -2.25, -7.75]
    edges = [0.0, -0.0, -1.0, -3.0, float("inf"), float("-inf"), float("nan")]
    for dt in ("float64", "float32"):
        d = getattr(torch, dt)
        rec(f"lgamma_{dt}", lambda: torch.lgamma(torch.tensor(pos + neg, dtype=d)))
        rec(f"digamma_{dt}", lambda: torch.digamma(torch.tensor(pos + neg, dtype=d)))
        rec(f"erfinv_{dt}", lambda: torch.erfinv(torch.tensor(
            [-0.999, -0.9, -0.5, -1e-3, 0.0, 1e-6, 0.25, 0.7, 0.95, 0.9999], dtype=d)))
        for n in (1, 2, 3):
            rec(f"polygamma{n}_{dt}", lambda: torch.polygamma(n, torch.tensor(pos, dtype=d)))
    rec("trigamma_negative", lambda: torch.polygamma(1, torch.tensor(neg, dtype=torch.float64)))
    rec("lgamma_edges", lambda: torch.lgamma(torch.tensor(edges)))
    rec("digamma_edges", lambda: torch.digamma(torch.tensor(edges)))
    rec("erfinv_edges", lambda: torch.erfinv(torch.tensor([1.0, -1.0, 1.5, -2.0, float("nan")])))
    rec("polygamma_edges", lambda: torch.polygamma(2, torch.tensor([0.0, float("inf"), float("nan")])))
    rec("lgamma_int", lambda: torch.lgamma(torch.tensor([1, 2, 3, 10])))
    rec("lgamma_method", lambda: torch.tensor([0.5, 4.0]).lgamma())
    rec("polygamma_method", lambda: torch.tensor([0.5, 4.0]).polygamma(1))
    rec("erfinv_inplace", lambda: torch.tensor([0.5, -0.25]).erfinv_())
    rec("mvlgamma", lambda: torch.mvlgamma(torch.tensor([2.5, 3.0, 7.25], dtype=torch.float64), 3))
    rec("mvlgamma_domain", lambda: torch.mvlgamma(torch.tensor([0.5, 3.0]), 3))
    rec("polygamma_negative_n", lambda: torch.polygamma(-1, torch.tensor([1.0])))
    rec("lgamma_grad", lambda: grad_of(torch.lgamma, [0.3, 2.5, 9.0, -1.5]))
    rec("digamma_grad", lambda: grad_of(torch.digamma, [0.3, 2.5, 9.0, -1.5]))
    rec("erfinv_grad", lambda: grad_of(torch.erfinv, [-0.9, 0.0, 0.3, 0.8]))
    rec("polygamma2_grad", lambda: grad_of(lambda x: torch.polygamma(2, x), [0.3, 2.5, 9.0]))
    rec("lgamma_double_backward", lambda: _second(torch, torch.lgamma, [0.7, 3.5]))
    rec("erfinv_double_backward", lambda: _second(torch, torch.erfinv, [-0.4, 0.6]))
    x = torch.tensor([-2.0, -0.5, 0.0, 0.3, 1.0, 4.0], dtype=torch.float64)
    p = torch.tensor([0.001, 0.1, 0.5, 0.8, 0.975], dtype=torch.float64)
    for name in ("erf", "erfc", "expit", "exp2", "expm1", "log1p", "sinc", "ndtr", "entr", "gammaln", "psi"):
        rec(f"special_{name}", lambda: getattr(S, name)(x))
    rec("special_ndtri", lambda: S.ndtri(p))
    rec("special_logit", lambda: S.logit(p, eps=0.01))
    rec("special_log_ndtr", lambda: S.log_ndtr(x))
    rec("special_xlog1py", lambda: S.xlog1py(torch.tensor([0.0, 1.0, 2.0]), torch.tensor([-1.0, 0.5, 3.0])))
    rec("special_xlogy", lambda: S.xlogy(torch.tensor([0.0, 1.0, 2.0]), torch.tensor([0.0, 0.5, 3.0])))
    rec("special_multigammaln", lambda: S.multigammaln(torch.tensor([3.0, 4.5], dtype=torch.float64), 2))
    rec("special_softmax", lambda: S.softmax(x.reshape(2, 3), 1))
    rec("special_log_softmax", lambda: S.log_softmax(x.reshape(2, 3), 0))
    rec("special_logsumexp", lambda: S.logsumexp(x.reshape(2, 3), 1))
    rec("special_round", lambda: S.round(torch.tensor([1.25, 2.5, -0.5])))

    # ---- affine_grid / grid_sample ----
    g = np.random.default_rng(5)
    img = g.standard_normal((2, 3, 4, 5))
    theta = np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]], [[1.3, 0.4, -0.3], [-0.5, 0.7, 0.25]]])
    for ac in (False, True):
        rec(f"affine_grid_ac{int(ac)}", lambda: grad_of(lambda t: F.affine_grid(t, [2, 3, 3, 4], align_corners=ac),
                                                        theta))
        for mode in ("bilinear", "nearest"):
            for pm in ("zeros", "border", "reflection"):
                def sample(i, t):
                    grid = F.affine_grid(t, [2, 3, 3, 6], align_corners=ac)
                    return F.grid_sample(i, grid * 1.35, mode=mode, padding_mode=pm, align_corners=ac)
                rec(f"grid_sample_{mode}_{pm}_ac{int(ac)}", lambda: grad_of(sample, img, theta))
    rec("grid_sample_float32", lambda: F.grid_sample(torch.tensor(img, dtype=torch.float32),
                                                     torch.tensor(g.uniform(-1.2, 1.2, (2, 2, 3, 2)),
                                                                  dtype=torch.float32), align_corners=False))
    rec("grid_sample_bad_mode", lambda: F.grid_sample(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 1, 2),
                                                      mode="cubic"))
    rec("grid_sample_bad_padding", lambda: F.grid_sample(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 1, 2),
                                                         padding_mode="wrap"))
    rec("grid_sample_batch", lambda: F.grid_sample(torch.zeros(2, 1, 2, 2), torch.zeros(1, 1, 1, 2)))
    rec("affine_grid_bad_theta", lambda: F.affine_grid(torch.zeros(1, 3, 3), [1, 1, 2, 2]))

    # ---- fold, local_response_norm, bilinear, embedding_bag ----
    cols = g.standard_normal((2, 3 * 2 * 2, 12))
    rec("fold", lambda: grad_of(lambda c: F.fold(c, (4, 5), (2, 2)), cols))
    rec("fold_stride_pad_dilation", lambda: grad_of(
        lambda c: F.fold(c, (5, 4), (2, 2), dilation=(2, 1), padding=1, stride=(2, 1)), cols[:, :, :10]))
    rec("fold_unfold_roundtrip", lambda: F.fold(F.unfold(torch.tensor(img), 2, stride=1), (4, 5), 2, stride=1))
    rec("fold_unbatched", lambda: F.fold(torch.tensor(cols[0]), (4, 5), 2).shape)
    rec("fold_bad_blocks", lambda: F.fold(torch.tensor(cols), (4, 6), 2))
    rec("fold_bad_kernel", lambda: F.fold(torch.zeros(1, 5, 12), (4, 5), 2))
    rec("local_response_norm", lambda: grad_of(lambda x: F.local_response_norm(x, 3), img))
    rec("local_response_norm_3d", lambda: grad_of(lambda x: F.local_response_norm(x, 2, alpha=0.1, beta=0.5, k=2.0),
                                                  img[:, :, :, 0]))
    rec("local_response_norm_2d", lambda: F.local_response_norm(torch.zeros(2, 3), 2))
    x1, x2 = g.standard_normal((4, 3)), g.standard_normal((4, 2))
    w, b = g.standard_normal((5, 3, 2)), g.standard_normal(5)
    rec("bilinear", lambda: grad_of(F.bilinear, x1, x2, w, b))
    rec("bilinear_nobias_batched", lambda: F.bilinear(torch.tensor(x1).reshape(2, 2, 3),
                                                      torch.tensor(x2).reshape(2, 2, 2), torch.tensor(w)))
    rec("bilinear_bad_weight", lambda: F.bilinear(torch.tensor(x1), torch.tensor(x2), torch.tensor(w[:, :2])))
    table = g.standard_normal((10, 3))
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offs = torch.tensor([0, 3, 3, 6])
    for mode in ("sum", "mean", "max"):
        rec(f"embedding_bag_{mode}", lambda: grad_of(lambda wt: F.embedding_bag(idx, wt, offs, mode=mode), table))
        rec(f"embedding_bag_2d_{mode}_padding", lambda: grad_of(
            lambda wt: F.embedding_bag(idx.reshape(2, 4), wt, mode=mode, padding_idx=4), table))
    rec("embedding_bag_weights", lambda: grad_of(
        lambda wt, psw: F.embedding_bag(idx, wt, offs, mode="sum", per_sample_weights=psw), table,
        g.standard_normal(8)))
    rec("embedding_bag_last_offset", lambda: F.embedding_bag(idx, torch.tensor(table), torch.tensor([0, 3, 8]),
                                                             include_last_offset=True))
    rec("embedding_bag_no_offsets", lambda: F.embedding_bag(idx, torch.tensor(table)))
    rec("embedding_bag_weights_mean", lambda: F.embedding_bag(idx, torch.tensor(table), offs, mode="mean",
                                                              per_sample_weights=torch.ones(8, dtype=torch.float64)))
    # ---- the 3-d family: conv3d, conv_transpose3d, pools, BatchNorm3d ----
    vol = g.standard_normal((2, 4, 5, 6, 7))
    k3 = g.standard_normal((6, 2, 3, 2, 3)) * 0.3
    rec("conv3d", lambda: grad_of(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1),
                                                           dilation=(1, 1, 2), groups=2), vol, k3, g.standard_normal(6)))
    rec("conv3d_same", lambda: F.conv3d(torch.tensor(vol[:1]), torch.tensor(k3[:, :2].repeat(2, 1)), padding="same"))
    rec("conv_transpose3d", lambda: grad_of(
        lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=1, output_padding=(1, 0, 1)), vol[:, :, :3, :3, :3],
        g.standard_normal((4, 3, 3, 2, 3)) * 0.3))
    rec("conv3d_bad_channels", lambda: F.conv3d(torch.zeros(1, 3, 4, 4, 4), torch.zeros(2, 2, 1, 1, 1)))
    rec("max_pool3d", lambda: grad_of(lambda x: F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0)), vol))
    rec("max_pool3d_ceil_dilated", lambda: F.max_pool3d(torch.tensor(vol), 2, stride=2, dilation=(1, 2, 1),
                                                        ceil_mode=True))
    rec("avg_pool3d", lambda: grad_of(lambda x: F.avg_pool3d(x, (3, 2, 3), stride=2, padding=1), vol))
    rec("avg_pool3d_exclude_pad", lambda: F.avg_pool3d(torch.tensor(vol), 3, stride=2, padding=1,
                                                       count_include_pad=False))
    rec("avg_pool3d_divisor", lambda: F.avg_pool3d(torch.tensor(vol), 2, divisor_override=3))
    rec("adaptive_avg_pool3d", lambda: grad_of(lambda x: F.adaptive_avg_pool3d(x, (2, 4, 3)), vol))
    rec("adaptive_max_pool3d", lambda: F.adaptive_max_pool3d(torch.tensor(vol), (3, 2, 5)))
    rec("batch_norm3d", lambda: _batch_norm3d(torch, vol))
    rec("module3d_reprs", lambda: [repr(m) for m in (
        torch.nn.Conv3d(4, 6, 3), torch.nn.Conv3d(4, 6, (1, 2, 3), stride=2, padding=1, bias=False),
        torch.nn.ConvTranspose3d(4, 2, 3, stride=2), torch.nn.MaxPool3d(2), torch.nn.AvgPool3d(3, stride=1),
        torch.nn.AdaptiveAvgPool3d((1, 2, 3)), torch.nn.BatchNorm3d(4))])
    rec("module3d_shapes", lambda: [list(p.shape) for m in (torch.nn.Conv3d(4, 6, (1, 2, 3)),
                                                            torch.nn.ConvTranspose3d(4, 2, 3, groups=2))
                                    for p in m.parameters()])
    rec("module_reprs", lambda: [repr(m) for m in (
        torch.nn.Bilinear(3, 2, 5), torch.nn.Bilinear(3, 2, 5, bias=False), torch.nn.Fold((4, 5), 2),
        torch.nn.Fold(4, (2, 3), stride=2, padding=1), torch.nn.LocalResponseNorm(3),
        torch.nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0), torch.nn.EmbeddingBag(10, 3),
        torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=0), torch.nn.EmbeddingBag(10, 3, mode="sum",
                                                                                        max_norm=1.0))])
    rec("module_state_dict_keys", lambda: [sorted(m.state_dict()) for m in (
        torch.nn.Bilinear(3, 2, 5), torch.nn.EmbeddingBag(10, 3), torch.nn.Bilinear(3, 2, 5, bias=False))])
    rec("module_shapes", lambda: [list(p.shape) for p in torch.nn.Bilinear(3, 2, 5).parameters()])
    return r


def _batch_norm3d(torch, vol):
    bn = torch.nn.BatchNorm3d(4)
    x = torch.tensor(vol, dtype=torch.float32)
    train = bn(x)
    bn.eval()
    return train, bn(x), bn.running_mean, bn.running_var


def _second(torch, f, values):
    """f's first and second derivatives at values, by create_graph."""
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (d1,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), x)
    return d1.detach(), d2


def encode(torch, v):
    return encode_value(torch, v)
