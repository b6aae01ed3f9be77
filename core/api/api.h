// The op API: one function per user-visible op, building its attributes. Each goes through
// dispatch() (core/dispatch/dispatch.h), so it runs now, is recorded, or is replayed.
#pragma once
#include <optional>
#include <vector>

#include "core/ops/registry.h"

namespace dyn::ops {

// ---- creation ----
Tensor full(const Dims& shape, Scalar value, DType dtype);
Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype);
Tensor rand(const Dims& shape, DType dtype);
Tensor randn(const Dims& shape, DType dtype);
Tensor randint(int64_t low, int64_t high, const Dims& shape, DType dtype);
// A tensor from host values in row-major order, cast to dtype.
Tensor from_doubles(const std::vector<double>& v, const Dims& shape, DType dtype);
Tensor from_ints(const std::vector<int64_t>& v, const Dims& shape, DType dtype);

// ---- elementwise ----
Tensor unary(OpId op, const Tensor& a);
Tensor binary(OpId op, const Tensor& a, const Tensor& b);
// The scalar stands on the right (a op s) or, with scalar_lhs, on the left (s op a).
Tensor binary(OpId op, const Tensor& a, Scalar s, bool scalar_lhs = false);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi);
Tensor to_dtype(const Tensor& a, DType dtype);  // returns `a` itself when already dtype
Tensor clone(const Tensor& a);
Tensor contiguous(const Tensor& a);  // returns `a` itself when already contiguous

// ---- in place: write into `self` (which may be a view); return self ----
Tensor& unary_(OpId op, Tensor& self);
Tensor& clamp_(Tensor& self, std::optional<Scalar> lo, std::optional<Scalar> hi);
Tensor& binary_(OpId op, Tensor& self, const Tensor& b);
Tensor& binary_(OpId op, Tensor& self, Scalar s);
Tensor& fill_(Tensor& self, Scalar v);
Tensor& copy_(Tensor& self, const Tensor& src);  // broadcasts and casts src

// ---- reductions; empty dims = all dims ----
// op is sum, mean, amax or amin
Tensor reduce(OpId op, const Tensor& a, const Dims& dims, bool keepdim, std::optional<DType> dtype = {});
// max/min along one dim: (values, indices); arg: indices only (dim nullopt = over the flattened tensor)
std::pair<Tensor, Tensor> max_dim(const Tensor& a, int64_t dim, bool keepdim, bool is_min);
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_min);
Tensor softmax(const Tensor& a, int64_t dim, bool log);
// Normalizes over the last `dims` dims (mean 0, variance 1 with eps), then scales by weight and
// shifts by bias when given (defined tensors of the normalized shape).
Tensor layer_norm(const Tensor& x, int64_t dims, double eps, const Tensor& weight, const Tensor& bias);

// ---- linear algebra ----
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- views (share storage) ----
Tensor reshape(const Tensor& a, const Dims& shape);  // a view when possible, a copy otherwise
Tensor view(const Tensor& a, const Dims& shape);     // a view or a RuntimeError
Tensor flatten(const Tensor& a, int64_t start, int64_t end);
Tensor permute(const Tensor& a, const Dims& perm);
Tensor transpose(const Tensor& a, int64_t d0, int64_t d1);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor squeeze(const Tensor& a, std::optional<int64_t> dim);
Tensor expand(const Tensor& a, const Dims& shape);  // -1 keeps a size
Tensor select(const Tensor& a, int64_t dim, int64_t index);
Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step);

// ---- gathers and joins ----
// a[index] along dim: result shape a.shape[:dim] + index.shape + a.shape[dim+1:]
Tensor index(const Tensor& a, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);
Tensor masked_select(const Tensor& a, const Tensor& mask);
// base with src added at index along dim (index 1-D; src's dim has index's length), in index order.
Tensor index_add(const Tensor& base, int64_t dim, const Tensor& index, const Tensor& src);
// base with src[p] added at p with p[dim] replaced by index[p], for every p of index, in order.
Tensor scatter_add(const Tensor& base, int64_t dim, const Tensor& index, const Tensor& src);
// A copy of base with src written at index along dim (torch.scatter; the last write wins).
Tensor scatter(const Tensor& base, int64_t dim, const Tensor& index, const Tensor& src);
// Running sum along dim (from the end when reverse); integers and bools sum as int64.
Tensor cumsum(const Tensor& a, int64_t dim, bool reverse = false);
// Stable sort along dim: values and their int64 indices into the input.
std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending);
Tensor cat(const std::vector<Tensor>& ts, int64_t dim);
Tensor stack(const std::vector<Tensor>& ts, int64_t dim);

// ---- host access ----
double item_double(const Tensor& a);  // RuntimeError unless numel()==1
int64_t item_int(const Tensor& a);

}  // namespace dyn::ops

namespace dyn {
// Accumulates d(root)/d(leaf) into every leaf's .grad (core/api/backward.cpp). gradient: for
// non-scalar roots.
// inputs (backward(inputs=...)): only these tensors' .grad get the gradient (a non-leaf's too).
// create_graph: the derivatives record history too, so that the gradients can be differentiated
// again (double backward, gradient penalties, Hessian-vector products).
void backward(const Tensor& root, const Tensor* gradient, bool retain_graph,
              const std::vector<Tensor>* inputs = nullptr, bool create_graph = false);
}  // namespace dyn
