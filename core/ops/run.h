// Running one op now, on data that is there: infer, allocate, kernel. The eager path of dispatch,
// the steps of a plan and the kernels' own helpers all run ops through here; nothing here records
// or tracks gradients (that is dispatch's job, one layer up).
#pragma once
#include <utility>

#include "core/ops/registry.h"

namespace dyn {

// Views share input 0's storage.
Tensor run_op(OpId op, std::span<const Tensor> in, const Attrs& a);
// Ops with two outputs (max_dim, min_dim).
std::pair<Tensor, Tensor> run_op2(OpId op, std::span<const Tensor> in, const Attrs& a);
// An in-place op: the result is written into `self` (cast when dtypes differ).
void run_op_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self);

// The user errors an in-place op raises before anything runs (shape, overlap, dtype).
void check_into(const OutMeta& m, const Tensor& self);
// Two views of one buffer that share some elements but not all, element for element (x and x.t(),
// x[1:] and x[:-1]): an in-place op reading one while writing the other would read values it has
// already overwritten. PyTorch's rule: views that are not non-overlapping-and-dense are too hard
// to tell and pass.
bool partially_overlap(const Tensor& a, const Tensor& b);
[[noreturn]] void fail_partial_overlap();
// An in-place op on a tensor over read-only memory (a read-only numpy array).
[[noreturn]] void fail_read_only_write();

// What kernels use to prepare operands: the same ops, run now.
namespace kern {
Tensor cast(const Tensor& t, DType d);  // t itself when already d
Tensor contiguous(const Tensor& t);     // t itself when already contiguous
Tensor permute(const Tensor& t, const Dims& perm);
Tensor view(const Tensor& t, const Dims& shape);
Tensor expand(const Tensor& t, const Dims& shape);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t stop, int64_t step);
// Copies src (broadcast to dst's shape, cast to its dtype) into dst.
void copy_into(const Tensor& dst, const Tensor& src);
// The one element of t as a double (t's data must be there).
double to_double(const Tensor& t);
}  // namespace kern

}  // namespace dyn
