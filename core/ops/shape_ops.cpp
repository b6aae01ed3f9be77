// Views (view, permute, expand, select, slice, unsqueeze, squeeze) and gathers/joins
// (index, gather, masked_select, cat). A view's infer computes its whole geometry.
#include <algorithm>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/ops/loops.h"
#include "core/ops/run.h"

namespace dyn {

namespace {

using InSpan = std::span<const Tensor>;
using OutSpan = std::span<Tensor>;

// Resolves one -1 in a requested shape against numel.
Dims infer_size(const Dims& req, int64_t numel) {
  Dims out = req;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < req.size(); ++i) {
    if (req[i] == -1) {
      DYN_CHECK(infer < 0, ErrorKind::Runtime, "only one dimension can be inferred");
      infer = i;
    } else {
      DYN_CHECK(req[i] >= 0, ErrorKind::Runtime, "invalid shape dimension {}", req[i]);
      known *= req[i];
    }
  }
  if (infer >= 0 && known != 0 && numel % known == 0) {
    out[infer] = numel / known;
    return out;
  }
  if (infer < 0 && known == numel) return out;
  fail(ErrorKind::Runtime, "shape '{}' is invalid for input of size {}", dims_str(req), numel);
}

// Strides that view `t` as `shape` without copying, if any (PyTorch's computeStride).
std::optional<Dims> view_strides(const Tensor& t, const Dims& shape) {
  const Dims& os = t.shape();
  const Dims& ost = t.strides();
  Dims ns = Dims::filled(shape.size(), 1);
  if (t.numel() == 0 || os.empty()) return contiguous_strides(shape);
  int view_d = shape.size() - 1;
  int64_t chunk = ost.back(), tensor_numel = 1, view_numel = 1;
  for (int td = os.size() - 1; td >= 0; --td) {
    tensor_numel *= os[td];
    if (td == 0 || (os[td - 1] != 1 && ost[td - 1] != tensor_numel * chunk)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        ns[view_d] = view_numel * chunk;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (td > 0) {
        chunk = ost[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return ns;
}

void infer_view(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  m->dtype = t.dtype();
  m->shape = infer_size(a.dims, t.numel());
  auto st = view_strides(t, m->shape);
  DYN_CHECK(st.has_value(), ErrorKind::Runtime,
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            "two contiguous subspaces). Use .reshape(...) instead.");
  m->strides = *st;
  m->offset = t.offset();
}

void infer_permute(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  DYN_CHECK(a.dims.size() == t.ndim(), ErrorKind::Runtime,
            "permute(): number of dimensions in the tensor input does not match the length of the desired ordering "
            "of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
            t.ndim(), a.dims.size());
  std::vector<bool> seen(t.ndim(), false);
  m->dtype = t.dtype();
  m->offset = t.offset();
  for (int i = 0; i < a.dims.size(); ++i) {
    int d = wrap_dim(a.dims[i], t.ndim());
    DYN_CHECK(!seen[d], ErrorKind::Runtime, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    m->shape.push_back(t.size(d));
    m->strides.push_back(t.strides()[d]);
  }
}

void infer_expand(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  const Dims& req = a.dims;
  DYN_CHECK(req.size() >= t.ndim(), ErrorKind::Runtime,
            "expand: the number of sizes provided ({}) must be greater or equal to the number of dimensions in the "
            "tensor ({})",
            req.size(), t.ndim());
  m->dtype = t.dtype();
  m->offset = t.offset();
  int lead = req.size() - t.ndim();
  for (int i = 0; i < req.size(); ++i) {
    int j = i - lead;
    int64_t want = req[i];
    if (j < 0) {
      DYN_CHECK(want >= 0, ErrorKind::Runtime,
                "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {}", i);
      m->shape.push_back(want);
      m->strides.push_back(0);
      continue;
    }
    int64_t have = t.size(j);
    if (want == -1) want = have;
    DYN_CHECK(want >= 0, ErrorKind::Runtime,
              "The expanded size of the tensor ({}) isn't allowed: sizes must be non-negative (or -1 to keep one)",
              want);
    if (have != want) {
      DYN_CHECK(have == 1, ErrorKind::Runtime,
                "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension "
                "{}.  Target sizes: {}.  Tensor sizes: {}",
                want, have, i, dims_str(req), dims_str(t.shape()));
      m->shape.push_back(want);
      m->strides.push_back(0);
    } else {
      m->shape.push_back(have);
      m->strides.push_back(t.strides()[j]);
    }
  }
}

void infer_select(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  DYN_CHECK(t.ndim() > 0, ErrorKind::Index,
            "invalid index of a 0-dim tensor. Use `tensor.item()` to convert a 0-dim tensor to a number");
  int d = wrap_dim(a.dim, t.ndim());
  int64_t size = t.size(d), i = a.i0;
  DYN_CHECK(i >= -size && i < size, ErrorKind::Index, "index {} is out of bounds for dimension {} with size {}", i, d,
            size);
  if (i < 0) i += size;
  m->dtype = t.dtype();
  m->shape = t.shape();
  m->strides = t.strides();
  m->offset = t.offset() + i * t.strides()[d];
  m->shape.erase(d);
  m->strides.erase(d);
}

void infer_slice(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  DYN_CHECK(t.ndim() > 0, ErrorKind::Index, "slice() cannot be applied to a 0-dim tensor.");
  int d = wrap_dim(a.dim, t.ndim());
  int64_t size = t.size(d), start = a.i0, stop = a.i1, step = a.i2;
  DYN_CHECK(step > 0, ErrorKind::Value, "step must be greater than zero");
  if (start < 0) start += size;
  if (stop < 0) stop += size;
  start = std::clamp<int64_t>(start, 0, size);
  stop = std::clamp<int64_t>(stop, start, size);
  m->dtype = t.dtype();
  m->shape = t.shape();
  m->strides = t.strides();
  m->shape[d] = (stop - start + step - 1) / step;
  m->strides[d] = t.strides()[d] * step;
  m->offset = t.offset() + start * t.strides()[d];
}

void infer_unsqueeze(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  int d = wrap_dim(a.dim, t.ndim() + 1);
  m->dtype = t.dtype();
  m->shape = t.shape();
  m->strides = t.strides();
  m->offset = t.offset();
  int64_t st = d < t.ndim() ? t.shape()[d] * t.strides()[d] : 1;
  m->shape.insert(d, 1);
  m->strides.insert(d, st);
}

void infer_squeeze(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  m->dtype = t.dtype();
  m->offset = t.offset();
  int only = a.has_lo ? wrap_dim(a.dim, t.ndim()) : -1;
  for (int d = 0; d < t.ndim(); ++d) {
    bool drop = t.size(d) == 1 && (only < 0 || only == d);
    if (drop) continue;
    m->shape.push_back(t.size(d));
    m->strides.push_back(t.strides()[d]);
  }
}

// ---- index: a[index] along dim ----

// The index dtypes PyTorch's index, gather and scatter kernels take.
bool is_index_dtype(DType t) { return t == DType::Int64 || t == DType::Int32; }

void infer_index(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  const Tensor& idx = in[1];
  DYN_CHECK(is_index_dtype(idx.dtype()), ErrorKind::Index,
            "tensors used as indices must be long, int, byte or bool tensors");
  DYN_CHECK(t.ndim() > 0, ErrorKind::Index, "too many indices for tensor of dimension 0");
  int d = wrap_dim(a.dim, t.ndim());
  m->dtype = t.dtype();
  for (int i = 0; i < d; ++i) m->shape.push_back(t.size(i));
  for (int64_t s : idx.shape()) m->shape.push_back(s);
  for (int i = d + 1; i < t.ndim(); ++i) m->shape.push_back(t.size(i));
}

// Wrapped, bounds-checked copies of the index values (int32 indices widen here).
std::vector<int64_t> checked_indices(const Tensor& idx, int64_t size, int dim) {
  Tensor c = kern::contiguous(kern::cast(idx, DType::Int64));
  std::vector<int64_t> v(c.data<int64_t>(), c.data<int64_t>() + c.numel());
  for (int64_t& i : v) {
    DYN_CHECK(i >= -size && i < size, ErrorKind::Index, "index {} is out of bounds for dimension {} with size {}", i,
              dim, size);
    if (i < 0) i += size;
  }
  return v;
}

void kernel_index(InSpan in, const Attrs& a, OutSpan out) {
  const Tensor& t = in[0];
  int d = wrap_dim(a.dim, t.ndim());
  std::vector<int64_t> idx = checked_indices(in[1], t.size(d), d);
  // [outer, size_d, inner] -> [outer, nidx, inner]
  Tensor src = kern::contiguous(t);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= t.size(i);
  for (int i = d + 1; i < t.ndim(); ++i) inner *= t.size(i);
  size_t es = itemsize(t.dtype());
  const char* sp = static_cast<const char*>(src.raw_data());
  char* op = static_cast<char*>(out[0].raw_data());
  int64_t n = static_cast<int64_t>(idx.size()), sd = t.size(d);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(op + ((o * n + k) * inner) * es, sp + ((o * sd + idx[k]) * inner) * es, inner * es);
}

// ---- gather ----

void infer_gather(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  const Tensor& idx = in[1];
  DYN_CHECK(is_index_dtype(idx.dtype()), ErrorKind::Runtime, "gather(): Expected dtype int64 for index");
  DYN_CHECK(idx.ndim() == t.ndim(), ErrorKind::Runtime,
            "Index tensor must have the same number of dimensions as input tensor");
  int d = wrap_dim(a.dim, t.ndim());
  for (int i = 0; i < t.ndim(); ++i)
    DYN_CHECK(i == d || idx.size(i) <= t.size(i), ErrorKind::Runtime,
              "Size does not match at dimension {} expected index {} to be smaller than self {} apart from "
              "dimension {}",
              i, dims_str(idx.shape()), dims_str(t.shape()), d);
  m->dtype = t.dtype();
  m->shape = idx.shape();
}

void kernel_gather(InSpan in, const Attrs& a, OutSpan out) {
  const Tensor& t = in[0];
  int nd = t.ndim();
  int d = wrap_dim(a.dim, nd);
  std::vector<int64_t> idx = checked_indices(in[1], nd ? t.size(d) : 1, d);
  const Dims& shape = in[1].shape();
  size_t es = itemsize(t.dtype());
  const char* base = static_cast<const char*>(t.raw_data());
  char* o = static_cast<char*>(out[0].raw_data());
  int64_t pos[kMaxDims] = {};
  for (size_t k = 0; k < idx.size(); ++k) {
    int64_t off = 0;
    for (int i = 0; i < nd; ++i) off += (i == d ? idx[k] : pos[i]) * t.strides()[i];
    std::memcpy(o + k * es, base + off * static_cast<int64_t>(es), es);
    for (int i = nd - 1; i >= 0 && ++pos[i] == shape[i]; --i) pos[i] = 0;
  }
}

// ---- masked_select: the output's length depends on the data ----

void infer_masked_select(InSpan in, const Attrs&, OutMeta* m) {
  DYN_CHECK(in[1].dtype() == DType::Bool, ErrorKind::Runtime, "masked_select: expected BoolTensor for mask");
  broadcast_shapes(in[0].shape(), in[1].shape());
  m->dtype = in[0].dtype();
}

void kernel_masked_select(InSpan in, const Attrs&, OutSpan out) {
  Dims shape = broadcast_shapes(in[0].shape(), in[1].shape());
  Tensor x = kern::contiguous(kern::expand(in[0], shape));
  Tensor mk = kern::contiguous(kern::expand(in[1], shape));
  const bool* mp = mk.data<bool>();
  int64_t n = x.numel(), count = 0;
  for (int64_t i = 0; i < n; ++i) count += mp[i];
  out[0] = Tensor::empty(Dims{count}, x.dtype());
  size_t es = itemsize(x.dtype());
  const char* sp = static_cast<const char*>(x.raw_data());
  char* op = static_cast<char*>(out[0].raw_data());
  for (int64_t i = 0, j = 0; i < n; ++i)
    if (mp[i]) std::memcpy(op + (j++) * es, sp + i * es, es);
}

// ---- cat ----

// Legacy PyTorch behaviour: 1-D empty tensors are skipped whatever the others' shape.
bool skipped_in_cat(const Tensor& t) { return t.ndim() == 1 && t.size(0) == 0; }

void infer_cat(InSpan in, const Attrs& a, OutMeta* m) {
  DYN_CHECK(!in.empty(), ErrorKind::Runtime, "torch.cat(): expected a non-empty list of Tensors");
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < in.size(); ++i) {
    DYN_CHECK(in[i].ndim() > 0, ErrorKind::Runtime, "zero-dimensional tensor (at position {}) cannot be concatenated",
              i);
    if (!ref && !skipped_in_cat(in[i])) ref = &in[i];
  }
  m->dtype = result_type(in);
  if (!ref) {
    m->shape = Dims{0};
    return;
  }
  int d = wrap_dim(a.dim, ref->ndim());
  m->shape = ref->shape();
  int64_t total = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = in[i];
    if (skipped_in_cat(t)) continue;
    DYN_CHECK(t.ndim() == ref->ndim(), ErrorKind::Runtime, "Tensors must have same number of dimensions: got {} and {}",
              ref->ndim(), t.ndim());
    for (int k = 0; k < t.ndim(); ++k)
      DYN_CHECK(k == d || t.size(k) == ref->size(k), ErrorKind::Runtime,
                "Sizes of tensors must match except in dimension {}. Expected size {} but got size {} for tensor "
                "number {} in the list.",
                d, ref->size(k), t.size(k), i);
    total += t.size(d);
  }
  m->shape[d] = total;
}

void kernel_cat(InSpan in, const Attrs& a, OutSpan out) {
  Tensor& o = out[0];
  if (o.numel() == 0) return;
  int d = wrap_dim(a.dim, o.ndim());
  int64_t at = 0;
  for (const Tensor& t : in) {
    if (skipped_in_cat(t)) continue;
    Tensor dst = kern::slice(o, d, at, at + t.size(d), 1);
    kern::copy_into(dst, t);
    at += t.size(d);
  }
}

// ---- index_add, scatter_add ----

void infer_index_add(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& base = in[0];
  DYN_CHECK(is_index_dtype(in[1].dtype()), ErrorKind::Index, "index_add_(): Expected dtype int64 for index");
  DYN_CHECK(in[2].dtype() == base.dtype(), ErrorKind::Runtime,
            "index_add_(): self and source must have the same dtype");
  int d = wrap_dim(a.dim, base.ndim());
  DYN_CHECK(in[1].ndim() <= 1, ErrorKind::Index, "index_add_(): Index is supposed to be a vector");
  DYN_CHECK(in[2].ndim() == base.ndim() && in[2].size(d) == in[1].numel(), ErrorKind::Runtime,
            "index_add_(): source of shape {} does not match self {} with {} indices along dim {}",
            dims_str(in[2].shape()), dims_str(base.shape()), in[1].numel(), d);
  m->dtype = base.dtype();
  m->shape = base.shape();
}

void kernel_index_add(InSpan in, const Attrs& a, OutSpan out) {
  const Tensor& base = in[0];
  int d = wrap_dim(a.dim, base.ndim());
  std::vector<int64_t> idx = checked_indices(in[1], base.size(d), d);
  kern::copy_into(out[0], base);
  Tensor src = kern::contiguous(in[2]);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= base.size(i);
  for (int i = d + 1; i < base.ndim(); ++i) inner *= base.size(i);
  int64_t n = static_cast<int64_t>(idx.size()), sd = base.size(d);
  visit_dtype(base.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T* o = out[0].data<T>();
      const T* s = src.data<T>();
      for (int64_t p = 0; p < outer; ++p)
        for (int64_t k = 0; k < n; ++k)
          for (int64_t q = 0; q < inner; ++q) o[(p * sd + idx[k]) * inner + q] += s[(p * n + k) * inner + q];
    }
  });
}

// scatter_add adds src into a copy of base at the indexed places; scatter writes it there.
template <OpId Op>
void infer_scatter(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& base = in[0];
  std::string_view name = op_name(Op);
  DYN_CHECK(is_index_dtype(in[1].dtype()), ErrorKind::Runtime, "{}(): Expected dtype int64 for index", name);
  DYN_CHECK(in[1].shape() == in[2].shape(), ErrorKind::Runtime, "{}(): index {} and src {} must have the same shape",
            name, dims_str(in[1].shape()), dims_str(in[2].shape()));
  DYN_CHECK(in[1].ndim() == base.ndim(), ErrorKind::Runtime,
            "Index tensor must have the same number of dimensions as self tensor");
  DYN_CHECK(in[2].dtype() == base.dtype(), ErrorKind::Runtime,
            "{}(): Expected self.dtype to be equal to src.dtype (got {} and {})", name, dtype_name(base.dtype()),
            dtype_name(in[2].dtype()));
  wrap_dim(a.dim, base.ndim());
  m->dtype = base.dtype();
  m->shape = base.shape();
}

template <OpId Op>
void kernel_scatter(InSpan in, const Attrs& a, OutSpan out) {
  const Tensor& base = in[0];
  int nd = base.ndim();
  int d = wrap_dim(a.dim, nd);
  std::vector<int64_t> idx = checked_indices(in[1], nd ? base.size(d) : 1, d);
  kern::copy_into(out[0], base);
  Tensor src = kern::contiguous(in[2]);
  const Dims& shape = in[1].shape();
  visit_dtype(base.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Op == OpId::scatter || !std::is_same_v<T, bool>) {
      T* o = out[0].data<T>();
      const T* s = src.data<T>();
      const Dims& st = out[0].strides();
      int64_t pos[kMaxDims] = {};
      for (size_t k = 0; k < idx.size(); ++k) {
        int64_t off = 0;
        for (int i = 0; i < nd; ++i) off += (i == d ? idx[k] : pos[i]) * st[i];
        if constexpr (Op == OpId::scatter)
          o[off] = s[k];
        else
          o[off] += s[k];
        for (int i = nd - 1; i >= 0 && ++pos[i] == shape[i]; --i) pos[i] = 0;
      }
    }
  });
}

// At record time: the index operand of index/gather/index_add/scatter_add, when its values are
// known (it came from outside the region or was computed before the last sync).
void check_index_values(InSpan in, const Attrs& a) {
  const Tensor& t = in[0];
  if (t.ndim() == 0 || !value_known(in[1])) return;
  int d = wrap_dim(a.dim, t.ndim());
  checked_indices(in[1], t.size(d), d);
}

}  // namespace

void register_shape_ops(OpDef* t) {
  // Views have no kernel: their infer makes the output share the input's storage.
  // clang-format off
#define DYN_VIEW(n) set_kernel(t, OpId::n, infer_##n, nullptr);
#define DYN_KERNEL(n) set_kernel(t, OpId::n, infer_##n, kernel_##n);
  DYN_VIEW(view) DYN_VIEW(permute) DYN_VIEW(expand) DYN_VIEW(select) DYN_VIEW(slice) DYN_VIEW(unsqueeze)
  DYN_VIEW(squeeze)
  DYN_KERNEL(index) DYN_KERNEL(gather) DYN_KERNEL(masked_select) DYN_KERNEL(cat) DYN_KERNEL(index_add)
#undef DYN_VIEW
#undef DYN_KERNEL
      // clang-format on
      set_kernel(t, OpId::scatter_add, infer_scatter<OpId::scatter_add>, kernel_scatter<OpId::scatter_add>);
  set_kernel(t, OpId::scatter, infer_scatter<OpId::scatter>, kernel_scatter<OpId::scatter>);
  for (OpId op : {OpId::index, OpId::gather, OpId::index_add, OpId::scatter_add, OpId::scatter})
    t[static_cast<int>(op)].check_values = check_index_values;
}

bool view_possible(const Tensor& t, const Dims& shape) { return view_strides(t, shape).has_value(); }

}  // namespace dyn
