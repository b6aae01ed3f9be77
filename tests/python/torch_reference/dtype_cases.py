"""Calls on every dtype (uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
bool): creation, promotion, arithmetic with its integer wrap-around, casts, the 16-bit floats' math
and reductions, numpy round trips and the errors. Run by PyTorch 2.15 to record dtypes.json
(record.py) and by dyn to compare with it (test_dtypes.py)."""
import numpy as np

INTS = ["uint8", "int8", "int16", "int32", "int64"]
HALVES = ["float16", "bfloat16"]
FLOATS = HALVES + ["float32", "float64"]
ALL = ["bool"] + INTS + FLOATS


def cases(torch):
    """name -> result of each call (a tensor, a dtype, a tuple, a number, or the error raised)."""
    r = {}

    def rec(k, f):
        try:
            r[k] = f()
        except Exception as e:  # noqa: BLE001 - the error is the recorded result
            r[k] = ("error", type(e).__name__, str(e).split("\n")[0])

    dt = {n: getattr(torch, n) for n in ALL}
    for n in ALL:
        d = dt[n]
        rec(f"tensor_{n}", lambda: torch.tensor([0, 1, 2, 100], dtype=d))
        rec(f"zeros_{n}", lambda: torch.zeros(2, 3, dtype=d))
        rec(f"full_{n}", lambda: torch.full((2,), 7, dtype=d))
        rec(f"itemsize_{n}", lambda: (d.itemsize, d.is_floating_point, d.is_signed, d.is_complex))
        rec(f"repr_{n}", lambda: repr(torch.tensor([1, 0, 3], dtype=d)).replace("torch.", "DT.").replace("dyn.", "DT."))
        rec(f"repr0_{n}", lambda: repr(torch.tensor(5, dtype=d)).replace("torch.", "DT.").replace("dyn.", "DT."))
        rec(f"element_size_{n}", lambda: torch.ones(1, dtype=d).element_size())
        rec(f"type_{n}", lambda: torch.ones(1, dtype=d).type())
        rec(f"item_{n}", lambda: torch.tensor([3], dtype=d).item())
        rec(f"sum_{n}", lambda: torch.tensor([1, 2, 3], dtype=d).sum())
        rec(f"cumsum_{n}", lambda: torch.tensor([1, 2, 3], dtype=d).cumsum(0))
        rec(f"amax_{n}", lambda: torch.tensor([[1, 5], [3, 2]], dtype=d).amax(1))
        rec(f"argmax_{n}", lambda: torch.tensor([1, 5, 3], dtype=d).argmax())
        rec(f"sort_{n}", lambda: torch.tensor([3, 1, 2], dtype=d).sort())
        rec(f"cat_{n}", lambda: torch.cat([torch.tensor([1], dtype=d), torch.tensor([2], dtype=d)]))
        rec(f"where_{n}", lambda: torch.where(torch.tensor([True, False]), torch.tensor([1, 2], dtype=d),
                                              torch.tensor([3, 4], dtype=d)))
        rec(f"index_{n}", lambda: torch.tensor([5, 6, 7], dtype=d)[torch.tensor([2, 0])])
        rec(f"mask_{n}", lambda: torch.tensor([5, 6, 7], dtype=d)[torch.tensor([True, False, True])])
        rec(f"gather_{n}", lambda: torch.tensor([[5, 6], [7, 1]], dtype=d).gather(1, torch.tensor([[1], [0]])))
        rec(f"eq_{n}", lambda: torch.tensor([1, 2], dtype=d) == torch.tensor([1, 3], dtype=d))
        rec(f"lt_scalar_{n}", lambda: torch.tensor([1, 2], dtype=d) < 2)
        rec(f"add_int_{n}", lambda: torch.tensor([1, 2], dtype=d) + 1)
        rec(f"add_float_{n}", lambda: torch.tensor([1, 2], dtype=d) + 1.5)
        rec(f"mul_bool_{n}", lambda: torch.tensor([1, 2], dtype=d) * True)
        rec(f"add_0dim_long_{n}", lambda: torch.tensor([1, 2], dtype=d) + torch.tensor(1))
        rec(f"add_0dim_double_{n}", lambda: torch.tensor([1, 2], dtype=d) + torch.tensor(1.0, dtype=torch.float64))
        rec(f"div_{n}", lambda: torch.tensor([1, 7], dtype=d) / torch.tensor([2, 2], dtype=d))
        rec(f"mean_{n}", lambda: torch.tensor([1, 2], dtype=d).mean())
        rec(f"neg_{n}", lambda: -torch.tensor([1, 2], dtype=d))
        rec(f"abs_{n}", lambda: torch.tensor([1, 2], dtype=d).abs())
        rec(f"exp_{n}", lambda: torch.tensor([0, 1, 2], dtype=d).exp())
        rec(f"matmul_{n}", lambda: torch.tensor([[1, 2], [3, 4]], dtype=d) @ torch.tensor([[1, 0], [2, 1]], dtype=d))
        rec(f"to_list_{n}", lambda: torch.tensor([1, 0], dtype=d).tolist())
        rec(f"numpy_{n}", lambda: str(torch.tensor([1, 0], dtype=d).numpy().dtype))
        rec(f"bitwise_and_{n}", lambda: torch.tensor([6, 3], dtype=d) & torch.tensor([3, 1], dtype=d))
        rec(f"clamp_{n}", lambda: torch.tensor([0, 5, 9], dtype=d).clamp(1, 6))
        rec(f"floor_divide_{n}", lambda: torch.tensor([7, 9], dtype=d) // torch.tensor([2, 4], dtype=d))
        rec(f"remainder_{n}", lambda: torch.tensor([7, 9], dtype=d) % torch.tensor([2, 4], dtype=d))
        rec(f"pow_{n}", lambda: torch.tensor([2, 3], dtype=d) ** 2)
        rec(f"maximum_{n}", lambda: torch.maximum(torch.tensor([2, 3], dtype=d), torch.tensor([4, 1], dtype=d)))
        for m in ALL:
            rec(f"promote_{n}_{m}", lambda: torch.promote_types(d, dt[m]))
            rec(f"add_{n}_{m}", lambda: torch.tensor([1, 0], dtype=d) + torch.tensor([1, 1], dtype=dt[m]))
            rec(f"cast_{n}_{m}", lambda: torch.tensor([0, 1, 3], dtype=d).to(dt[m]))

    # Integer arithmetic wraps around; floats go to narrower integers through int32 or int64.
    for n in INTS:
        d = dt[n]
        big = {"uint8": 200, "int8": 100, "int16": 30000, "int32": 2 ** 31 - 1, "int64": 2 ** 63 - 1}[n]
        rec(f"wrap_add_{n}", lambda: torch.tensor([big], dtype=d) + torch.tensor([big], dtype=d))
        rec(f"wrap_mul_{n}", lambda: torch.tensor([big], dtype=d) * 3)
        rec(f"neg_wrap_{n}", lambda: -torch.tensor([big, 1], dtype=d))
        rec(f"floor_divide_neg_{n}", lambda: torch.tensor([7, -7], dtype=d) // torch.tensor([-2, 2], dtype=d))
        rec(f"remainder_neg_{n}", lambda: torch.tensor([7, -7], dtype=d) % torch.tensor([-2, 2], dtype=d))
        rec(f"from_float_{n}", lambda: torch.tensor([3e9, -3e9, 1e20, float("nan"), float("inf"), -129.7, 255.9,
                                                     -1.5, 70000.0, -40000.0]).to(d))
        rec(f"from_double_{n}", lambda: torch.tensor([3e9, -129.7, 70000.0, -2.5e10], dtype=torch.float64).to(d))
        rec(f"iinfo_{n}", lambda: (torch.iinfo(d).min, torch.iinfo(d).max, torch.iinfo(d).bits, repr(torch.iinfo(d))))
        rec(f"bitwise_not_{n}", lambda: ~torch.tensor([0, 5], dtype=d))
        rec(f"sum_dtype_{n}", lambda: torch.tensor([big, big], dtype=torch.int64).sum(dtype=d))
        rec(f"arange_{n}", lambda: torch.arange(1, 10, 3, dtype=d))
        rec(f"from_numpy_{n}", lambda: torch.from_numpy(np.array([1, 2], dtype=n)))
        rec(f"tensor_numpy_{n}", lambda: torch.tensor(np.array([[1], [2]], dtype=n)))

    # The 16-bit floats: computed in float32, rounded once per op.
    # 128 values: PyTorch's CPU kernels run whole vectors of them, rounding once per op. (The
    # leftover elements of a size that is not a multiple of its vectors go through scalar code that
    # rounds some intermediate results too: rsqrt of a 6-element float16 tensor differs.)
    x = [0.1, 1 / 3, -2.5, 3.14159, 100.7, 1e-3, 7.0, -0.01] * 16
    for n in HALVES:
        d = dt[n]
        t = lambda: torch.tensor(x, dtype=d)  # noqa: E731
        for op in ["exp", "log", "sqrt", "tanh", "sigmoid", "sin", "cos", "erf", "relu", "abs", "neg", "floor", "ceil",
                   "reciprocal", "rsqrt", "expm1", "log1p", "square"]:
            rec(f"{op}_{n}", lambda: getattr(t().abs() if op in ("log", "sqrt", "rsqrt", "log1p") else t(), op)())
        rec(f"gelu_{n}", lambda: torch.nn.functional.gelu(t()))
        rec(f"silu_{n}", lambda: torch.nn.functional.silu(t()))
        rec(f"chain_{n}", lambda: (t() * 3 + 1).exp() / 7 - t())
        rec(f"mul_{n}", lambda: t() * t())
        rec(f"div_{n}", lambda: t() / 3)
        rec(f"sum_{n}", lambda: torch.arange(100, dtype=d).sum())
        rec(f"sum_large_{n}", lambda: torch.full((5000,), 0.1, dtype=d).sum())
        rec(f"mean_{n}", lambda: t().mean())
        rec(f"cumsum_{n}", lambda: t().cumsum(0))
        rec(f"softmax_{n}", lambda: torch.softmax(t(), 0))
        rec(f"log_softmax_{n}", lambda: torch.log_softmax(t(), 0))
        rec(f"layer_norm_{n}", lambda: torch.nn.functional.layer_norm(t().reshape(16, 8), (8,)))
        rec(f"matmul_{n}", lambda: t()[:6].reshape(2, 3) @ t()[:6].reshape(3, 2))
        rec(f"finfo_{n}", lambda: (torch.finfo(d).eps, torch.finfo(d).max, torch.finfo(d).tiny, repr(torch.finfo(d))))
        rec(f"overflow_{n}", lambda: torch.tensor([60000.0, 1e39], dtype=torch.float64).to(d))
        rec(f"round_trip_{n}", lambda: torch.tensor([0.1, 65519.0, 65520.0, 1e-8, 2 ** -24, 3 * 2 ** -26],
                                                    dtype=torch.float64).to(d).to(torch.float64))
        rec(f"nan_{n}", lambda: torch.tensor([float("nan"), float("inf"), -float("inf")]).to(d))
        rec(f"item_{n}", lambda: torch.tensor(1.1, dtype=d).item())
        rec(f"bitwise_{n}", lambda: t() & t())
        rec(f"linear_{n}", lambda: torch.nn.functional.linear(t()[:6].reshape(2, 3), t()[:6].reshape(2, 3), t()[:2]))
    rec("numpy_float16", lambda: torch.from_numpy(np.array([0.1, 2.5], dtype=np.float16)))
    rec("numpy_bfloat16", lambda: torch.tensor([1.0], dtype=torch.bfloat16).numpy())
    rec("numpy_uint16", lambda: torch.tensor(np.array([1], dtype=np.uint16)).dtype)
    rec("result_type_scalar", lambda: torch.result_type(torch.tensor([1], dtype=torch.int32), 2.0))
    rec("result_type_0dim", lambda: torch.result_type(torch.tensor([1], dtype=torch.int8), torch.tensor(5)))
    rec("result_type_0dim_float", lambda: torch.result_type(torch.tensor([1], dtype=torch.int8),
                                                            torch.tensor(5.0, dtype=torch.float64)))
    rec("result_type_tensors", lambda: torch.result_type(torch.tensor([1], dtype=torch.uint8),
                                                         torch.tensor([1], dtype=torch.int8)))
    rec("can_cast", lambda: (torch.can_cast(torch.float16, torch.int32), torch.can_cast(torch.int32, torch.float16),
                             torch.can_cast(torch.int8, torch.bool), torch.can_cast(torch.bool, torch.uint8)))
    rec("methods", lambda: [getattr(torch.ones(1), m)().dtype for m in ("int", "short", "char", "byte", "half",
                                                                        "bfloat16", "long", "float", "double")])
    rec("int_index", lambda: torch.arange(5.0)[torch.tensor([1, 3], dtype=torch.int32)])
    rec("int_index_set", lambda: _set(torch.arange(5.0), torch.tensor([1, 3], dtype=torch.int32), 9.0))
    rec("short_index", lambda: torch.arange(5.0)[torch.tensor([1], dtype=torch.int16)])
    rec("mean_int_error", lambda: torch.tensor([1, 2], dtype=torch.int32).mean())
    rec("inplace_int_float", lambda: torch.tensor([1, 2], dtype=torch.int32).add_(1.5))
    rec("inplace_half_float", lambda: torch.tensor([1, 2], dtype=torch.float16).add_(torch.tensor([0.1, 0.2])))
    rec("mixed_matmul", lambda: torch.ones(2, 2, dtype=torch.int32) @ torch.ones(2, 2))
    rec("bool_neg", lambda: -torch.tensor([True]))

    # Ops made of several steps keep float32 between them, as PyTorch's kernels do.
    h300 = lambda: torch.tensor([300.0, 300.0], dtype=torch.float16)  # noqa: E731
    rec("norm_half", lambda: h300().norm())
    rec("vector_norm_half", lambda: torch.linalg.vector_norm(h300()))
    rec("var_half", lambda: torch.tensor([-200.0, 200, 0, 0], dtype=torch.float16).var())
    rec("std_half", lambda: torch.tensor([-200.0, 200, 0, 0], dtype=torch.bfloat16).std())
    rec("normalize_half", lambda: torch.nn.functional.normalize(h300()[None]))
    rec("rms_norm_eps_half", lambda: torch.nn.functional.rms_norm(torch.tensor([1e-3, 1e-3], dtype=torch.float16), (2,)))
    rec("clip_grad_norm_half", lambda: _clip(torch, torch.float16))
    rec("clip_grad_norm_generator", lambda: _clip(torch, torch.float32))
    # Operands meet in the 16-bit dtype: a Python float or a 0-dim float32 tensor is rounded to it.
    h = lambda: torch.tensor([1.0, -2.0], dtype=torch.float16)  # noqa: E731
    rec("scalar_eq_half", lambda: h() == 1.0001)
    rec("scalar_add_half", lambda: h() + 5.1)
    rec("zero_dim_eq_half", lambda: h() == torch.tensor(1.0001))
    rec("scalar_eq_bf16", lambda: torch.tensor([1.0], dtype=torch.bfloat16) == 1.001)
    rec("int_eq_zero_dim_half", lambda: torch.tensor([2049], dtype=torch.int32) == torch.tensor(2048.0, dtype=torch.float16))
    rec("sub_alpha_half", lambda: torch.tensor([7.699], dtype=torch.float16).sub(torch.tensor([1.0996], dtype=torch.float16), alpha=0.3001))
    rec("sum_dtype_half_of_float", lambda: torch.tensor([0.1] * 3).sum(dtype=torch.float16))
    # Integers: bounds saturate, products and cumulative products in int64, cumsum keeps dtype=.
    rec("clamp_uint8_bounds", lambda: torch.tensor([0, 1, 2], dtype=torch.uint8).clamp(-1, 3))
    rec("clamp_int8_bounds", lambda: torch.tensor([100, -100, 5], dtype=torch.int8).clamp(max=200))
    rec("prod_int8", lambda: torch.tensor([100, 100, 100], dtype=torch.int8).prod())
    rec("cumprod_int8", lambda: torch.tensor([100, 100, 100], dtype=torch.int8).cumprod(0))
    rec("cumsum_dtype_uint8", lambda: torch.tensor([100, 100, 100], dtype=torch.int8).cumsum(0, dtype=torch.uint8))
    # Values that do not fit, and the ranges of random numbers.
    rec("overflow_tensor_int8", lambda: torch.tensor(300, dtype=torch.int8))
    rec("overflow_list_uint8", lambda: torch.tensor([1, 300], dtype=torch.uint8))
    rec("negative_uint8", lambda: torch.tensor([-1], dtype=torch.uint8))
    rec("overflow_int32", lambda: torch.tensor([1e10], dtype=torch.int32))
    rec("overflow_fill_int8", lambda: torch.zeros(2, dtype=torch.int8).fill_(300))
    rec("overflow_masked_fill", lambda: torch.zeros(2, dtype=torch.int8).masked_fill(torch.tensor([True, False]), 300))
    rec("overflow_add_wraps", lambda: torch.zeros(2, dtype=torch.int8) + 300)
    rec("full_half_inf", lambda: torch.full((1,), 70000.0, dtype=torch.float16))
    rec("randint_range_uint8", lambda: torch.randint(0, 300, (2,), dtype=torch.uint8))
    rec("rand_half_below_one", lambda: (bool((torch.rand(20000, dtype=torch.float16) < 1).all()),
                                        bool((torch.rand(20000, dtype=torch.bfloat16) < 1).all())))
    rec("random_ranges", lambda: (bool((torch.empty(2000, dtype=torch.int8).random_() >= 0).all()),
                                  float(torch.empty(2000, dtype=torch.float16).random_().max()) <= 2048))
    # Functions that took int64 or numpy only.
    rec("bincount_uint8", lambda: torch.bincount(torch.tensor([1, 1, 3], dtype=torch.uint8)))
    rec("searchsorted_int32", lambda: torch.searchsorted(torch.tensor([1, 3]), torch.tensor([2, 4]), out_int32=True))
    rec("cross_entropy_uint8", lambda: torch.nn.functional.cross_entropy(torch.tensor([[0.5, 1.5]]),
                                                                        torch.tensor([1], dtype=torch.uint8)))
    rec("cross_entropy_int32", lambda: torch.nn.functional.cross_entropy(torch.tensor([[0.5, 1.5]]),
                                                                        torch.tensor([1], dtype=torch.int32)))
    rec("nonzero_bf16", lambda: torch.tensor([0.0, 1.5, 0.0, 2.0], dtype=torch.bfloat16).nonzero())
    rec("unique_bf16", lambda: torch.unique(torch.tensor([2.0, 1.5, 2.0], dtype=torch.bfloat16)))
    rec("view_dtype", lambda: torch.tensor([1.0, -2.0], dtype=torch.bfloat16).view(torch.int16))
    rec("view_dtype_half", lambda: torch.tensor([15360, -16384], dtype=torch.int16).view(torch.float16))
    rec("autocast", lambda: _autocast(torch))
    return r


def _clip(torch, dtype):
    p = torch.nn.Parameter(torch.zeros(2, dtype=dtype))
    p.grad = torch.tensor([300.0, 300.0], dtype=dtype)
    total = torch.nn.utils.clip_grad_norm_((q for q in [p]), 1.0)  # a generator, as model.parameters()
    return total, p.grad


def _autocast(torch):
    a = torch.tensor([[0.1, 0.2], [0.3, 0.4]])
    lin = torch.nn.Linear(2, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.1, -0.7], [0.3, 2.9]]))
        lin.bias.copy_(torch.tensor([0.01, -0.02]))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return a @ a, lin(a), (a @ a).float() + 1, torch.mm(a, a.t()), a.double() @ a.double()


def _set(t, i, v):
    t[i] = v
    return t


def encode(torch, v):
    """A result as JSON: [dtype, shape, values] for a tensor (NaN as "nan", infinities as "inf" and
    "-inf"), the name of a dtype, lists for tuples, and the error's type and first line."""
    def clean(o):
        if isinstance(o, (list, tuple)):
            return [clean(e) for e in o]
        if isinstance(o, float) and (o != o or o in (float("inf"), -float("inf"))):
            return str(o)
        return o

    if isinstance(v, torch.Tensor):
        return [str(v.dtype).split(".")[-1], list(v.shape), clean(v.tolist())]
    if isinstance(v, torch.dtype):
        return "dtype:" + str(v).split(".")[-1]
    if isinstance(v, tuple) and v and v[0] == "error":
        return list(v)
    if isinstance(v, (tuple, list)):
        return [encode(torch, e) for e in v]
    return clean(v)
