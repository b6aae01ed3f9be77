// The derivative of every differentiable op, named by the deriv column of its row in ops.def.
// Each computes input gradients from output gradients with ordinary ops (see Note [autograd]).
#include <cmath>

#include "core/api/api.h"
#include "core/autograd/autograd.h"
#include "core/capture/capture.h"
#include "core/error.h"

namespace dyn {

namespace {

using GradIn = std::vector<Tensor>*;
using GradOut = std::span<const Tensor>;

Scalar S(double v) { return Scalar::from_double(v); }
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(OpId::mul, a, b); }
Tensor mul(const Tensor& a, double s) { return ops::binary(OpId::mul, a, S(s)); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(OpId::div, a, b); }
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(OpId::add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return ops::binary(OpId::sub, a, b); }
Tensor neg(const Tensor& a) { return ops::unary(OpId::neg, a); }
Tensor zeros_like(const Tensor& a) { return ops::full(a.shape(), Scalar::from_int(0), a.dtype()); }
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return ops::where(c, a, b); }
Tensor fzeros(const Tensor& like) { return ops::full(Dims{}, Scalar::from_int(0), like.dtype()); }

// The gradient of a broadcast operand: summed over the dims it was broadcast along.
Tensor sum_to(const Tensor& g, const Dims& shape) {
  if (g.shape() == shape) return g;
  int lead = g.ndim() - shape.size();
  Dims dims;
  for (int i = 0; i < g.ndim(); ++i)
    if (i < lead || (shape[i - lead] == 1 && g.size(i) != 1)) dims.push_back(i);
  Tensor r = dims.empty() ? g : ops::reduce(OpId::sum, g, dims, true);
  return ops::reshape(r, shape);
}

// Reinserts reduced dims as size 1, so a reduction's gradient broadcasts back over its input.
Tensor unreduce(const Tensor& g, const Tensor& input, const Dims& dims, bool keepdim) {
  if (keepdim || input.ndim() == 0) return g;
  std::vector<bool> reduced(input.ndim(), dims.empty());
  for (int64_t d : dims) reduced[wrap_dim(d, input.ndim())] = true;
  Dims shape;
  for (int i = 0; i < input.ndim(); ++i) shape.push_back(reduced[i] ? 1 : input.size(i));
  return ops::reshape(g, shape);
}

// ---- unary ----
void d_neg(const GradNode&, GradOut g, GradIn in) { (*in)[0] = neg(g[0]); }
void d_abs(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  Tensor z = fzeros(g[0]);
  (*in)[0] = where(ops::binary(OpId::gt, x, S(0)), g[0], where(ops::binary(OpId::lt, x, S(0)), neg(g[0]), z));
}
void d_exp(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = mul(g[0], n.outputs[0]); }
void d_expm1(const GradNode& n, GradOut g, GradIn in) {
  (*in)[0] = mul(g[0], ops::binary(OpId::add, n.outputs[0], S(1)));
}
void d_log(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = div(g[0], n.inputs[0]); }
void d_log1p(const GradNode& n, GradOut g, GradIn in) {
  (*in)[0] = div(g[0], ops::binary(OpId::add, n.inputs[0], S(1)));
}
void d_sqrt(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = div(g[0], mul(n.outputs[0], 2.0)); }
void d_rsqrt(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& y = n.outputs[0];
  (*in)[0] = mul(mul(g[0], -0.5), mul(mul(y, y), y));
}
void d_sin(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = mul(g[0], ops::unary(OpId::cos, n.inputs[0])); }
void d_cos(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = mul(g[0], neg(ops::unary(OpId::sin, n.inputs[0]))); }
void d_tanh(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& y = n.outputs[0];
  (*in)[0] = mul(g[0], ops::binary(OpId::sub, mul(y, y), S(1), true));
}
void d_sigmoid(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& y = n.outputs[0];
  (*in)[0] = mul(mul(g[0], ops::binary(OpId::sub, y, S(1), true)), y);
}
void d_relu(const GradNode& n, GradOut g, GradIn in) {
  (*in)[0] = where(ops::binary(OpId::gt, n.outputs[0], S(0)), g[0], fzeros(g[0]));
}
void d_gelu(const GradNode& n, GradOut g, GradIn in) {
  // d/dx x*Phi(x) = Phi(x) + x*phi(x)
  const Tensor& x = n.inputs[0];
  Tensor cdf = mul(ops::binary(OpId::add, ops::unary(OpId::erf, mul(x, M_SQRT1_2)), S(1)), 0.5);
  Tensor pdf = mul(ops::unary(OpId::exp, mul(mul(x, x), -0.5)), 0.3989422804014327);
  (*in)[0] = mul(g[0], add(cdf, mul(x, pdf)));
}
void d_silu(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  Tensor s = ops::unary(OpId::sigmoid, x);
  Tensor one_minus = ops::binary(OpId::sub, s, S(1), true);
  (*in)[0] = mul(g[0], mul(s, ops::binary(OpId::add, mul(x, one_minus), S(1))));
}
void d_zero(const GradNode& n, GradOut, GradIn in) { (*in)[0] = zeros_like(n.inputs[0]); }
void d_clamp(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  Tensor keep = ops::full(x.shape(), Scalar::from_bool(true), DType::Bool);
  if (n.attrs.has_lo) keep = ops::binary(OpId::logical_and, keep, ops::binary(OpId::ge, x, n.attrs.scalar));
  if (n.attrs.has_hi) keep = ops::binary(OpId::logical_and, keep, ops::binary(OpId::le, x, n.attrs.scalar2));
  (*in)[0] = where(keep, g[0], fzeros(g[0]));
}
void d_cast(const GradNode& n, GradOut g, GradIn in) {
  if (is_floating(n.inputs[0].dtype())) (*in)[0] = ops::to_dtype(g[0], n.inputs[0].dtype());
}

// ---- binary: inputs[1] is absent when the other operand was a Python number ----
bool has_b(const GradNode& n) { return n.inputs.size() == 2; }
Tensor scalar_tensor(const GradNode& n) { return ops::full(Dims{}, n.attrs.scalar, n.outputs[0].dtype()); }
// The two operands as the formulas see them: (a, b) in the op's order.
std::pair<Tensor, Tensor> operands(const GradNode& n) {
  if (has_b(n)) return {n.inputs[0], n.inputs[1]};
  Tensor s = scalar_tensor(n);
  return n.attrs.side == ScalarSide::Lhs ? std::make_pair(s, n.inputs[0]) : std::make_pair(n.inputs[0], s);
}
// Stores (ga, gb) into the tensor inputs' slots, reduced to their shapes.
void put(const GradNode& n, GradIn in, const Tensor& ga, const Tensor& gb) {
  if (has_b(n)) {
    if (ga.defined()) (*in)[0] = sum_to(ga, n.inputs[0].shape());
    if (gb.defined()) (*in)[1] = sum_to(gb, n.inputs[1].shape());
  } else {
    const Tensor& gt = n.attrs.side == ScalarSide::Lhs ? gb : ga;
    if (gt.defined()) (*in)[0] = sum_to(gt, n.inputs[0].shape());
  }
}
void d_add(const GradNode& n, GradOut g, GradIn in) { put(n, in, g[0], g[0]); }
void d_sub(const GradNode& n, GradOut g, GradIn in) { put(n, in, g[0], neg(g[0])); }
void d_mul(const GradNode& n, GradOut g, GradIn in) {
  auto [a, b] = operands(n);
  put(n, in, mul(g[0], b), mul(g[0], a));
}
void d_div(const GradNode& n, GradOut g, GradIn in) {
  auto [a, b] = operands(n);
  put(n, in, div(g[0], b), neg(div(mul(g[0], a), mul(b, b))));
}
void d_pow(const GradNode& n, GradOut g, GradIn in) {
  auto [a, b] = operands(n);
  // d/da a^b = b * a^(b-1), 0 where b == 0; d/db a^b = a^b * log(a), 0 where a == 0 and b >= 0
  // (PyTorch's masks: they turn 0 * inf at a zero base into the limit, 0), in PyTorch's order:
  // g * (b * a^(b-1)) and g * (a^b * log(a)), so that the rounding is its.
  Tensor z = fzeros(g[0]);
  Tensor ga = where(ops::binary(OpId::eq, b, S(0)), z,
                    mul(g[0], mul(b, ops::binary(OpId::pow, a, ops::binary(OpId::sub, b, S(1))))));
  Tensor zero_base = ops::binary(OpId::logical_and, ops::binary(OpId::eq, a, S(0)), ops::binary(OpId::ge, b, S(0)));
  Tensor gb = mul(g[0], where(zero_base, z, mul(n.outputs[0], ops::unary(OpId::log, a))));
  put(n, in, ga, gb);
}
void d_max_min(const GradNode& n, GradOut g, GradIn in, bool is_max) {
  auto [a, b] = operands(n);
  // Ties share the gradient, as in PyTorch.
  Tensor half = mul(g[0], 0.5), z = fzeros(g[0]);
  Tensor a_wins = ops::binary(is_max ? OpId::gt : OpId::lt, a, b);
  Tensor tie = ops::binary(OpId::eq, a, b);
  Tensor ga = where(a_wins, g[0], where(tie, half, z));
  Tensor gb = where(a_wins, z, where(tie, half, g[0]));
  put(n, in, ga, gb);
}
void d_remainder(const GradNode& n, GradOut g, GradIn in) {
  // a - floor(a / b) * b: d/da = 1, d/db = -floor(a / b)
  auto [a, b] = operands(n);
  put(n, in, g[0], mul(g[0], neg(ops::unary(OpId::floor, div(a, b)))));
}
void d_fmod(const GradNode& n, GradOut g, GradIn in) {
  // a - trunc(a / b) * b: d/da = 1, d/db = -trunc(a / b)
  auto [a, b] = operands(n);
  Tensor q = div(a, b);
  Tensor t = where(ops::binary(OpId::lt, q, S(0)), ops::unary(OpId::ceil, q), ops::unary(OpId::floor, q));
  put(n, in, g[0], mul(g[0], neg(t)));
}
void d_hypot(const GradNode& n, GradOut g, GradIn in) {
  auto [a, b] = operands(n);
  const Tensor& r = n.outputs[0];
  put(n, in, div(mul(g[0], a), r), div(mul(g[0], b), r));
}
void d_logaddexp(const GradNode& n, GradOut g, GradIn in) {
  // d/da = 1 / (1 + exp(b - a)), d/db = 1 / (1 + exp(a - b))
  auto [a, b] = operands(n);
  Tensor one_a = ops::binary(OpId::add, ops::unary(OpId::exp, sub(b, a)), S(1));
  Tensor one_b = ops::binary(OpId::add, ops::unary(OpId::exp, sub(a, b)), S(1));
  put(n, in, div(g[0], one_a), div(g[0], one_b));
}
void d_masked_select(const GradNode& n, GradOut g, GradIn in) {
  // The mask's data picks the positions: it is known (the op ran eagerly at its graph break).
  const Tensor& x = n.inputs[0];
  Dims shape = broadcast_shapes(x.shape(), n.inputs[1].shape());
  std::vector<int64_t> pos;
  {
    EagerScope eager;
    Tensor m = ops::contiguous(ops::expand(n.inputs[1], shape));
    const bool* mp = m.data<bool>();
    for (int64_t i = 0; i < m.numel(); ++i)
      if (mp[i]) pos.push_back(i);
  }
  Tensor idx = ops::from_ints(pos, Dims{static_cast<int64_t>(pos.size())}, DType::Int64);
  Tensor flat = ops::index_add(ops::full(Dims{numel_of(shape)}, Scalar::from_int(0), x.dtype()), 0, idx, g[0]);
  (*in)[0] = sum_to(ops::reshape(flat, shape), x.shape());
}
void d_atan2(const GradNode& n, GradOut g, GradIn in) {
  // d/da atan2(a, b) = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
  auto [a, b] = operands(n);
  Tensor r = add(mul(a, a), mul(b, b));
  put(n, in, div(mul(g[0], b), r), neg(div(mul(g[0], a), r)));
}
void d_maximum(const GradNode& n, GradOut g, GradIn in) { d_max_min(n, g, in, true); }
void d_minimum(const GradNode& n, GradOut g, GradIn in) { d_max_min(n, g, in, false); }
void d_where(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& c = n.inputs[0];
  Tensor z = fzeros(g[0]);
  if (is_floating(n.inputs[1].dtype())) (*in)[1] = sum_to(where(c, g[0], z), n.inputs[1].shape());
  if (is_floating(n.inputs[2].dtype())) (*in)[2] = sum_to(where(c, z, g[0]), n.inputs[2].shape());
}

// ---- reductions ----
void d_sum(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  Tensor gu = unreduce(g[0], x, n.attrs.dims, n.attrs.keepdim);
  (*in)[0] = ops::expand(ops::to_dtype(gu, x.dtype()), x.shape());  // read by broadcasting, not copied
}
void d_mean(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  int64_t count = x.numel() / std::max<int64_t>(1, n.outputs[0].numel());
  Tensor gu = unreduce(g[0], x, n.attrs.dims, n.attrs.keepdim);
  (*in)[0] = ops::expand(ops::binary(OpId::div, gu, S(static_cast<double>(count))), x.shape());
}
void d_amax_amin(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  Tensor y = unreduce(n.outputs[0], x, n.attrs.dims, n.attrs.keepdim);
  Tensor gu = unreduce(g[0], x, n.attrs.dims, n.attrs.keepdim);
  Tensor mask = ops::to_dtype(ops::binary(OpId::eq, x, y), x.dtype());
  Tensor count = ops::reduce(OpId::sum, mask, n.attrs.dims, true);
  (*in)[0] = div(mul(mask, gu), count);
}
void d_max_dim(const GradNode& n, GradOut g, GradIn in) {
  if (!g[0].defined()) return;
  const Tensor& x = n.inputs[0];
  int dim = wrap_dim(n.attrs.dim, x.ndim());
  Dims dims{dim};
  Tensor gu = unreduce(g[0], x, dims, n.attrs.keepdim);
  // one-hot of the indices along dim: arange(size) == index
  Tensor idx =
      ops::to_dtype(unreduce(ops::argmax(x, n.attrs.dim, true, n.op == OpId::min_dim), x, dims, true), DType::Int64);
  Dims ar_shape = Dims::filled(x.ndim(), 1);
  ar_shape[dim] = x.size(dim);
  Tensor ar = ops::reshape(
      ops::arange(Scalar::from_int(0), Scalar::from_int(x.size(dim)), Scalar::from_int(1), DType::Int64), ar_shape);
  Tensor hot = ops::to_dtype(ops::binary(OpId::eq, ar, idx), x.dtype());
  (*in)[0] = mul(hot, gu);
}
void d_softmax(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& y = n.outputs[0];
  Tensor s = ops::reduce(OpId::sum, mul(g[0], y), Dims{n.attrs.dim}, true);
  (*in)[0] = mul(y, sub(g[0], s));
}
void d_log_softmax(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& y = n.outputs[0];
  Tensor s = ops::reduce(OpId::sum, g[0], Dims{n.attrs.dim}, true);
  (*in)[0] = sub(g[0], mul(ops::unary(OpId::exp, y), s));
}

void d_layer_norm(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  Dims dims;
  for (int64_t d = x.ndim() - n.attrs.i0; d < x.ndim(); ++d) dims.push_back(d);
  Tensor xc = sub(x, ops::reduce(OpId::mean, x, dims, true));
  Tensor rstd =
      ops::unary(OpId::rsqrt, ops::binary(OpId::add, ops::reduce(OpId::mean, mul(xc, xc), dims, true), n.attrs.scalar));
  Tensor xhat = mul(xc, rstd);
  const bool has_w = n.attrs.has_lo, has_b = n.attrs.has_hi;
  Tensor gw = has_w ? mul(g[0], n.inputs[1]) : g[0];
  if (n.next[0].node) {
    // rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) over the normalized dims
    Tensor m1 = ops::reduce(OpId::mean, gw, dims, true);
    Tensor m2 = ops::reduce(OpId::mean, mul(gw, xhat), dims, true);
    (*in)[0] = mul(rstd, sub(sub(gw, m1), mul(xhat, m2)));
  }
  if (has_w && n.next[1].node) (*in)[1] = sum_to(mul(g[0], xhat), n.inputs[1].shape());
  if (has_b && n.next[has_w ? 2 : 1].node) (*in)[has_w ? 2 : 1] = sum_to(g[0], n.inputs[has_w ? 2 : 1].shape());
}

// ---- matmul ----
void d_matmul(const GradNode& n, GradOut g, GradIn in) {
  Tensor a = n.inputs[0], b = n.inputs[1], go = g[0];
  bool a1 = a.ndim() == 1, b1 = b.ndim() == 1;
  if (a1) a = ops::unsqueeze(a, 0);
  if (b1) b = ops::unsqueeze(b, 1);
  if (a1 && b1) {
    go = ops::reshape(go, Dims{1, 1});
  } else {
    if (a1) go = ops::unsqueeze(go, -2);
    if (b1) go = ops::unsqueeze(go, -1);
  }
  // Only the gradients something needs (a layer's input data often needs none).
  if (n.next[0].node) {
    Tensor ga = sum_to(ops::matmul(go, ops::transpose(b, -1, -2)), a.shape());
    (*in)[0] = ops::reshape(ga, n.inputs[0].shape());
  }
  if (n.next[1].node && !b1 && b.ndim() == 2 && a.ndim() >= 2) {
    // A matrix applied to rows, over any batch dims (a Linear): one product over the folded rows,
    // as PyTorch does, instead of a product per batch and a sum over them. When the matrix is a
    // transposed weight (x @ W.t()), the product is taken as (go^T a)^T so that the gradient
    // comes out in W's layout and W.grad needs no transposing copy.
    Tensor a2 = a.ndim() == 2 ? a : ops::reshape(a, Dims{-1, a.size(a.ndim() - 1)});
    Tensor go2 = go.ndim() == 2 ? go : ops::reshape(go, Dims{-1, go.size(go.ndim() - 1)});
    bool transposed = b.size(0) > 1 && b.size(1) > 1 && b.strides()[0] == 1 && b.strides()[1] == b.size(0);
    (*in)[1] = transposed ? ops::transpose(ops::matmul(ops::transpose(go2, 0, 1), a2), 0, 1)
                          : ops::matmul(ops::transpose(a2, 0, 1), go2);
  } else if (n.next[1].node) {
    Tensor gb = sum_to(ops::matmul(ops::transpose(a, -1, -2), go), b.shape());
    (*in)[1] = ops::reshape(gb, n.inputs[1].shape());
  }
}

// ---- views ----
void d_view(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = ops::reshape(g[0], n.inputs[0].shape()); }
void d_permute(const GradNode& n, GradOut g, GradIn in) {
  Dims inv = Dims::filled(n.attrs.dims.size(), 0);
  for (int i = 0; i < n.attrs.dims.size(); ++i) inv[wrap_dim(n.attrs.dims[i], n.attrs.dims.size())] = i;
  (*in)[0] = ops::permute(g[0], inv);
}
void d_expand(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = sum_to(g[0], n.inputs[0].shape()); }
void d_unsqueeze(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = ops::reshape(g[0], n.inputs[0].shape()); }
// select/slice: the gradient goes into the selected part of zeros (an in-place write on a fresh
// tensor: legal, and recorded like any op inside a region).
void d_select_slice(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  Tensor z = zeros_like(x);
  Tensor part = n.op == OpId::select ? ops::select(z, n.attrs.dim, n.attrs.i0)
                                     : ops::slice(z, n.attrs.dim, n.attrs.i0, n.attrs.i1, n.attrs.i2);
  ops::copy_(part, g[0]);
  (*in)[0] = z;
}
void d_index(const GradNode& n, GradOut g, GradIn in) {
  // g has a.shape[:d] + index.shape + a.shape[d+1:]: flatten the index dims to one.
  const Tensor& a = n.inputs[0];
  const Tensor& idx = n.inputs[1];
  int d = wrap_dim(n.attrs.dim, a.ndim());
  Dims flat;
  for (int i = 0; i < d; ++i) flat.push_back(a.size(i));
  flat.push_back(idx.numel());
  for (int i = d + 1; i < a.ndim(); ++i) flat.push_back(a.size(i));
  Tensor g2 = ops::reshape(ops::contiguous(g[0]), flat);
  (*in)[0] = ops::index_add(zeros_like(a), d, ops::reshape(idx, Dims{idx.numel()}), g2);
}
void d_erf(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  (*in)[0] = mul(g[0], mul(ops::unary(OpId::exp, neg(mul(x, x))), 1.1283791670955126));  // 2/sqrt(pi)
}
void d_erfc(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& x = n.inputs[0];
  (*in)[0] = mul(g[0], mul(ops::unary(OpId::exp, neg(mul(x, x))), -1.1283791670955126));  // -2/sqrt(pi)
}
// The inverse and hyperbolic functions, in PyTorch's forms (derivatives.yaml).
void d_tan(const GradNode& n, GradOut g, GradIn in) {
  const Tensor& y = n.outputs[0];
  (*in)[0] = mul(g[0], ops::binary(OpId::add, mul(y, y), S(1)));
}
void d_asin(const GradNode& n, GradOut g, GradIn in) {  // g * rsqrt(1 - x^2)
  const Tensor& x = n.inputs[0];
  (*in)[0] = mul(g[0], ops::unary(OpId::rsqrt, ops::binary(OpId::sub, mul(x, x), S(1), true)));
}
void d_acos(const GradNode& n, GradOut g, GradIn in) {  // -g * rsqrt(1 - x^2)
  const Tensor& x = n.inputs[0];
  (*in)[0] = mul(g[0], neg(ops::unary(OpId::rsqrt, ops::binary(OpId::sub, mul(x, x), S(1), true))));
}
void d_atan(const GradNode& n, GradOut g, GradIn in) {  // g / (x^2 + 1)
  const Tensor& x = n.inputs[0];
  (*in)[0] = div(g[0], ops::binary(OpId::add, mul(x, x), S(1)));
}
void d_sinh(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = mul(g[0], ops::unary(OpId::cosh, n.inputs[0])); }
void d_cosh(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = mul(g[0], ops::unary(OpId::sinh, n.inputs[0])); }
void d_asinh(const GradNode& n, GradOut g, GradIn in) {  // g * rsqrt(x^2 + 1)
  const Tensor& x = n.inputs[0];
  (*in)[0] = mul(g[0], ops::unary(OpId::rsqrt, ops::binary(OpId::add, mul(x, x), S(1))));
}
void d_acosh(const GradNode& n, GradOut g, GradIn in) {  // g * rsqrt(x^2 - 1)
  const Tensor& x = n.inputs[0];
  (*in)[0] = mul(g[0], ops::unary(OpId::rsqrt, ops::binary(OpId::sub, mul(x, x), S(1))));
}
void d_atanh(const GradNode& n, GradOut g, GradIn in) {  // g / (1 - x^2)
  const Tensor& x = n.inputs[0];
  (*in)[0] = div(g[0], ops::binary(OpId::sub, mul(x, x), S(1), true));
}
void d_gather(const GradNode& n, GradOut g, GradIn in) {
  (*in)[0] = ops::scatter_add(zeros_like(n.inputs[0]), n.attrs.dim, n.inputs[1], g[0]);
}
void d_index_add(const GradNode& n, GradOut g, GradIn in) {
  (*in)[0] = g[0];
  (*in)[2] = ops::index(g[0], n.attrs.dim, n.inputs[1]);
}
void d_scatter_add(const GradNode& n, GradOut g, GradIn in) {
  (*in)[0] = g[0];
  (*in)[2] = ops::gather(g[0], n.attrs.dim, n.inputs[1]);
}
void d_scatter(const GradNode& n, GradOut g, GradIn in) {
  // The written places take nothing from base; src's gradient is read back from them.
  (*in)[0] = ops::scatter(g[0], n.attrs.dim, n.inputs[1], zeros_like(n.inputs[2]));
  (*in)[2] = ops::gather(g[0], n.attrs.dim, n.inputs[1]);
}
void d_cumsum(const GradNode& n, GradOut g, GradIn in) { (*in)[0] = ops::cumsum(g[0], n.attrs.dim, !n.attrs.reverse); }
void d_sort(const GradNode& n, GradOut g, GradIn in) {
  if (!g[0].defined()) return;
  // Each value goes back to where it came from: outputs[1] holds the indices.
  const Tensor& x = n.inputs[0];
  if (x.ndim() == 0) {
    (*in)[0] = g[0];
    return;
  }
  (*in)[0] = ops::scatter(zeros_like(x), n.attrs.dim, n.outputs[1], ops::contiguous(g[0]));
}
void d_cat(const GradNode& n, GradOut g, GradIn in) {
  int dim = -1;
  int64_t at = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Tensor& t = n.inputs[i];
    if (t.ndim() == 1 && t.size(0) == 0 && n.inputs.size() > 1) continue;
    if (dim < 0) dim = wrap_dim(n.attrs.dim, t.ndim());
    if (is_floating(t.dtype())) (*in)[i] = ops::slice(g[0], dim, at, at + t.size(dim), 1);
    at += t.size(dim);
  }
}

// The saved column: bit i of inputs = input i, output = output 0.
struct Saved {
  uint32_t inputs;
  bool output;
};
constexpr Saved saved_none{0, false}, saved_in0{1, false}, saved_in1{2, false}, saved_in01{3, false},
    saved_out{0, true}, saved_in0_out{1, true}, saved_in01_out{3, true};
constexpr BackwardFn d_none = nullptr;

}  // namespace

const Derivative& derivative_of(OpId op) {
  static const Derivative table[kNumOps] = {
#define DYN_OP(n, cls, nin, nout, rule, formula, deriv, saved, python) \
  Derivative{d_##deriv, saved_##saved.inputs, saved_##saved.output},
#include "core/ops/ops.def"
#undef DYN_OP
  };
  return table[static_cast<int>(op)];
}

}  // namespace dyn
