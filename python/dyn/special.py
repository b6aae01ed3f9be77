"""torch.special, and the gamma-family and erfinv functions of torch's namespace (lgamma, digamma,
polygamma, mvlgamma, igamma, igammac, erfinv), composed of dyn's ops so that they compile like any other.

Note [special functions in float64]: these have no kernel of their own. Each is evaluated in
float64 (a float32, half or bfloat16 input is widened, the result rounded back to its dtype) by
the classical series: lgamma by Stirling's series after shifting the argument past 12, digamma and
polygamma by the asymptotic series of the Hurwitz zeta function after the same shift, both with
the reflection formula below 1/2; erfinv by Giles' approximation refined by two Newton steps on
erf. That is within a few float64 ULP of PyTorch's Cephes-derived kernels, so float32 results are
PyTorch's but for rare last-bit ties. Their derivatives are PyTorch's formulas (digamma for
lgamma, polygamma(n + 1) for polygamma(n), sqrt(pi)/2 exp(erfinv(x)^2) for erfinv), as custom
autograd functions, so that a gradient is not the derivative of the series and double backward
works through them. trigamma (polygamma(1, x), digamma's derivative) is PyTorch's own short
series, step for step, because PyTorch's is good to only about 1e-10 and gradients should match."""
import math

from _dyn import Tensor

import dyn

from .autograd import Function

_LOG_2PI_HALF = 0.5 * math.log(2.0 * math.pi)
_SHIFT = 12


def _wide(x):
    """(x in float64, the dtype of the result): PyTorch gives integer inputs the default dtype."""
    if not isinstance(x, Tensor):
        x = dyn.tensor(x)
    out = x.dtype if x.dtype.is_floating_point else dyn.get_default_dtype()
    return x.to(dyn.float64), out


def _shifted(t):
    """(z, small): z = t + 12 where t < 12 (else t), so that the asymptotic series converge."""
    small = t < _SHIFT
    return dyn.where(small, t + _SHIFT, t), small


def _lgamma64(x):
    reflect = x < 0.5
    t = dyn.where(reflect, 1.0 - x, x)
    z, small = _shifted(t)
    prod = t
    for k in range(1, _SHIFT):
        prod = prod * (t + k)
    r = 1.0 / z
    r2 = r * r
    series = r * (1 / 12 + r2 * (-1 / 360 + r2 * (1 / 1260 + r2 * (-1 / 1680 + r2 * (1 / 1188 + r2 * (
        -691 / 360360 + r2 * (1 / 156)))))))
    stirling = (z - 0.5) * z.log() - z + _LOG_2PI_HALF + series
    value = stirling - dyn.where(small, prod, dyn.ones_like(prod)).log()
    # lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    sin = (x * math.pi).sin().abs()
    value = dyn.where(reflect, math.log(math.pi) - sin.log() - value, value)
    # exactly 0 at 1 and 2, as PyTorch's (the series cancels to a few ULP of 20 there)
    value = dyn.where((x == 1.0) | (x == 2.0), dyn.zeros_like(x), value)
    pole = (x <= 0) & (x == x.floor())
    return dyn.where(pole | x.isinf(), dyn.full_like(x, math.inf), value)


def _zeta_tail(s, z):
    """The Euler-Maclaurin tail of the Hurwitz zeta function zeta(s, z) for z >= 12."""
    # B_2j / (2j)!, j = 1..6
    coefs = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000)
    zs = z.pow(-s)
    out = z * zs / (s - 1) + zs * 0.5
    rising, term = float(s), zs / z
    inv2 = 1.0 / (z * z)
    for j, c in enumerate(coefs):
        if j:
            rising *= (s + 2 * j - 1) * (s + 2 * j)
            term = term * inv2
        out = out + term * (c * rising)
    return out


def _digamma64(x):
    reflect = x < 0.5
    t = dyn.where(reflect, 1.0 - x, x)
    z, small = _shifted(t)
    shift = 1.0 / t
    for k in range(1, _SHIFT):
        shift = shift + 1.0 / (t + k)
    r2 = 1.0 / (z * z)
    series = r2 * (1 / 12 - r2 * (1 / 120 - r2 * (1 / 252 - r2 * (1 / 240 - r2 * (1 / 132 - r2 * (
        691 / 32760 - r2 * (1 / 12)))))))
    value = z.log() - 0.5 / z - series - dyn.where(small, shift, dyn.zeros_like(shift))
    # digamma(x) = digamma(1 - x) - pi / tan(pi x)
    value = dyn.where(reflect, value - math.pi / (x * math.pi).tan(), value)
    # PyTorch's (and SciPy's) values at the poles: -inf at +0, +inf at -0, NaN at the negative integers
    value = dyn.where(x == 0, dyn.where(x.signbit(), dyn.full_like(x, math.inf), dyn.full_like(x, -math.inf)), value)
    value = dyn.where((x < 0) & (x == x.floor()), dyn.full_like(x, math.nan), value)
    return dyn.where(x == math.inf, x, value)


def _trigamma(x):
    """PyTorch's trigamma, step for step in x's own dtype (its float32 and float64 kernels): six
    terms of the series, then the asymptotic expansion; the reflection formula below 1/2."""
    reflect = x < 0.5
    sin = (x * math.pi).sin()
    result = dyn.where(reflect, -(math.pi * math.pi) / (sin * sin), dyn.zeros_like(x))
    x = dyn.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return dyn.where(reflect, -result, result)


def _polygamma64(n, x):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2."""
    s = n + 1
    z = x + 2 * _SHIFT
    head = x.pow(-s)
    for k in range(1, 2 * _SHIFT):
        head = head + (x + k).pow(-s)
    value = (head + _zeta_tail(s, z)) * ((-1) ** (n + 1) * math.factorial(n))
    # PyTorch's values at the poles (an infinity of the sign of (-1)^(n+1)) and at +inf (NaN,
    # from its zeta function)
    pole = (x <= 0) & (x == x.floor())
    value = dyn.where(x == math.inf, dyn.full_like(x, math.nan), value)
    return dyn.where(pole, dyn.full_like(x, (-1) ** (n + 1) * math.inf), value)


def _erfinv64(y):
    # Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision
    w = -((1.0 - y) * (1.0 + y)).log()
    c = w - 2.5
    p = 2.81022636e-08
    for a in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
              0.246640727, 1.50140941):
        p = c * p + a
    t = w.sqrt() - 3.0
    q = -0.000200214257
    for a in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
              1.00167406, 2.83297682):
        q = t * q + a
    x = dyn.where(w < 5.0, p, q) * y
    for _ in range(2):
        x = x - (x.erf() - y) / ((-x * x).exp() * (2.0 / math.sqrt(math.pi)))
    x = dyn.where(y.abs() == 1.0, y * math.inf, x)
    return dyn.where(y.abs() > 1.0, dyn.full_like(y, math.nan), x)


def _igamma64(a, x, upper):
    """The regularized incomplete gamma functions P(a, x) (upper=False) and Q(a, x) = 1 - P: the
    power series where x < a + 1, Legendre's continued fraction (modified Lentz) elsewhere, each
    with enough terms for float64 over a < 1000; PyTorch's values at 0, inf and bad arguments."""
    a, x = dyn.broadcast_tensors(a, x)
    series_side = x < a + 1
    # work only where each method converges: the other side gets harmless arguments
    xs = dyn.where(series_side, x, dyn.zeros_like(x))
    xc = dyn.where(series_side, a + 2, x)
    log_front = -x + a * x.clamp(min=1e-300).log() - _lgamma64(a)
    term = 1.0 / a
    total = term
    for n in range(1, 400):
        term = term * xs / (a + n)
        total = total + term
    p_series = total * (-xs + a * xs.clamp(min=1e-300).log() - _lgamma64(a)).exp()
    tiny = 1e-300
    b = xc + 1 - a
    c = dyn.full_like(b, 1 / tiny)
    d = 1 / b
    h = d
    for i in range(1, 200):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = dyn.where(d.abs() < tiny, dyn.full_like(d, tiny), d)
        c = b + an / c
        c = dyn.where(c.abs() < tiny, dyn.full_like(c, tiny), c)
        d = 1 / d
        h = h * (d * c)
    q_cf = log_front.exp() * h
    p = dyn.where(series_side, p_series, 1 - q_cf)
    q = dyn.where(series_side, 1 - p_series, q_cf)
    out = q if upper else p
    out = dyn.where(x == 0, dyn.full_like(out, 1.0 if upper else 0.0), out)
    out = dyn.where(x == math.inf, dyn.full_like(out, 0.0 if upper else 1.0), out)
    bad = (a < 0) | (x < 0) | ((a == 0) & (x == 0))
    out = dyn.where(a == 0, dyn.full_like(out, 0.0 if upper else 1.0), out)
    return dyn.where(bad | a.isnan() | x.isnan(), dyn.full_like(out, math.nan), out)


class _Igamma(Function):
    @staticmethod
    def forward(ctx, a, x, upper):
        ctx.upper = upper
        ctx.save_for_backward(a, x)
        dtype = dyn.promote_types(a.dtype, x.dtype)
        dtype = dtype if dtype.is_floating_point else dyn.get_default_dtype()
        with dyn.no_grad():
            return _igamma64(a.to(dyn.float64), x.to(dyn.float64), upper).to(dtype)

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("derivative for aten::igamma is not implemented (with respect to input, the "
                                      "first argument), as in PyTorch")
        d = (-x + (a - 1) * x.log() - lgamma(a)).exp()
        return None, g * (-d if ctx.upper else d), None


def gammainc(input, other):
    """The regularized lower incomplete gamma function P(input, other)."""
    return _Igamma.apply(_tensor("igamma", input), _tensor("igamma", other), False)


def gammaincc(input, other):
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P."""
    return _Igamma.apply(_tensor("igammac", input), _tensor("igammac", other), True)


def _evaluate(f, x):
    wide, out = _wide(x)
    with dyn.no_grad():
        return f(wide).to(out)


class _Lgamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _evaluate(_lgamma64, x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * digamma(x)


class _Digamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _evaluate(_digamma64, x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * polygamma(1, x)


class _Polygamma(Function):
    @staticmethod
    def forward(ctx, n, x):
        ctx.n = n
        ctx.save_for_backward(x)
        if n == 1:
            dtype = x.dtype if x.dtype in (dyn.float32, dyn.float64) else None
            if dtype is not None:
                return _trigamma(x)
            return _trigamma(x.to(dyn.float32)).to(_wide(x)[1])
        return _evaluate(lambda v: _polygamma64(n, v), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return None, g * polygamma(ctx.n + 1, x)


class _Erfinv(Function):
    @staticmethod
    def forward(ctx, y):
        ctx.save_for_backward(y)
        return _evaluate(_erfinv64, y)

    @staticmethod
    def backward(ctx, g):
        # erfinv(y) again rather than the saved result, so that create_graph differentiates it
        (y,) = ctx.saved_tensors
        out = erfinv(y)
        return g * (out * out).exp() * (math.sqrt(math.pi) / 2.0)


def _tensor(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    if x.dtype == dyn.bool or x.is_complex():
        raise RuntimeError(f'"{name}_vml_cpu" not implemented for \'{str(x.dtype).split(".")[-1].capitalize()}\'')
    return x


def lgamma(input):
    return _Lgamma.apply(_tensor("lgamma", input))


def digamma(input):
    return _Digamma.apply(_tensor("digamma", input))


def erfinv(input):
    return _Erfinv.apply(_tensor("erfinv", input))


def polygamma(n, input):
    """torch.polygamma(n, input): the n-th derivative of digamma."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(input)
    return _Polygamma.apply(n, _tensor("polygamma", input))


def _polygamma_method(self, n):
    return polygamma(n, self)


def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension p."""
    if not isinstance(p, int) or p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    out = _wide(_tensor("mvlgamma", input))[1]
    steps = dyn.arange(p, dtype=input.dtype if input.dtype.is_floating_point else out) * -0.5
    x = input if input.dtype.is_floating_point else input.to(out)
    return lgamma(x.unsqueeze(-1) + steps).sum(-1) + (p * (p - 1) / 4 * math.log(math.pi))


# ---- torch.special ----

def _float_in(x):
    return x if x.dtype.is_floating_point else x.to(dyn.get_default_dtype())


def erf(input):
    return dyn.erf(input)


def erfc(input):
    return dyn.erfc(input)


def gammaln(input):
    return lgamma(input)


def psi(input):
    return digamma(input)


def multigammaln(input, p):
    return mvlgamma(input, p)


def expit(input):
    return dyn.sigmoid(input)


def logit(input, eps=None):
    return dyn.logit(input, eps)


def exp2(input):
    return dyn.exp2(input)


def expm1(input):
    return dyn.expm1(input)


def log1p(input):
    return dyn.log1p(input)


def sinc(input):
    return dyn.sinc(input)


def round(input, decimals=0):
    return dyn.round(input, decimals=decimals)


def xlogy(input, other):
    return dyn.xlogy(input, other)


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (and other not NaN)."""
    if not isinstance(input, Tensor):
        input = dyn.tensor(input, dtype=other.dtype)
    if not isinstance(other, Tensor):
        other = dyn.tensor(other, dtype=input.dtype if input.dtype.is_floating_point else None)
    x, y = _float_in(input), _float_in(other)
    out = x * y.log1p()
    return dyn.where((x == 0) & ~y.isnan(), dyn.zeros_like(out), out)


def entr(input):
    """-x log x elementwise: 0 at 0, -inf below 0."""
    x = _float_in(input)
    out = -x * x.log()
    out = dyn.where(x == 0, dyn.zeros_like(out), out)
    return dyn.where(x < 0, dyn.full_like(out, -math.inf), out)


def ndtr(input):
    """The standard normal CDF."""
    x = _float_in(input)
    return (x * -math.sqrt(0.5)).erfc() * 0.5


def ndtri(input):
    """The inverse of ndtr."""
    x = _float_in(input)
    return erfinv(x * 2.0 - 1.0) * math.sqrt(2.0)


def log_ndtr(input):
    return ndtr(input).log()


def softmax(input, dim, dtype=None):
    return dyn.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    return dyn.log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False):
    return dyn.logsumexp(input, dim, keepdim=keepdim)


# torch's namespace and Tensor's methods (dyn/__init__.py installs them)
TORCH_FUNCTIONS = {"lgamma": lgamma, "digamma": digamma, "erfinv": erfinv, "polygamma": polygamma,
                   "mvlgamma": mvlgamma, "igamma": gammainc, "igammac": gammaincc}
TENSOR_METHODS = {"lgamma": lgamma, "digamma": digamma, "erfinv": erfinv, "mvlgamma": mvlgamma,
                  "polygamma": _polygamma_method, "igamma": gammainc, "igammac": gammaincc,
                  "lgamma_": lambda self: self.copy_(lgamma(self)),
                  "digamma_": lambda self: self.copy_(digamma(self)),
                  "erfinv_": lambda self: self.copy_(erfinv(self)),
                  "polygamma_": lambda self, n: self.copy_(polygamma(n, self))}
