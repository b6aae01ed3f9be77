// Recording: each op of a call that no cached trace serves appends a node to the current segment.
//
// Note [capture]
// Inside a region, dispatch() hands every op to the Capture. Recording runs the op's own infer
// function (so shape and dtype errors surface at the user's line, exactly as in eager mode),
// appends a node, and returns a lazy tensor: a TensorImpl with the geometry eager mode would give
// but no data. Tensors from outside the region enter the segment as graph inputs the first time
// they are used. In-place ops record a node that writes into its target's buffer when the segment
// runs; the target (even a parameter from outside) is then lazy until the next sync, and its
// storage is flagged so that any other view of it syncs before being read.
//
// A sync point (graph break or region exit) runs the segment: the live lazy tensors are its
// outputs; dead nodes are dropped, common subexpressions merged, and the remaining nodes run in
// program order with the eager kernels. Each live lazy TensorImpl then adopts the storage and
// geometry of its computed value and is an ordinary tensor again. Because the same infer and the
// same kernels run in the same order on the same inputs, results are bitwise equal to eager mode.
#include "core/capture/capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/run.h"

namespace dyn {

thread_local int DerivativeScope::current_ = -1;

void Capture::check_record(OpId op, std::span<const Tensor> in, const Attrs& a, const Tensor* self) {
  const OpDef& d = op_def(op);
  if (d.check_values) {
    EagerScope eager;  // reading an index tensor may make it contiguous: host work, not the trace's
    d.check_values(in, a);
  }
  if (!self) return;
  auto target = buffer_of(*self);
  for (const Tensor& t : in)
    if (buffer_of(t) == target && (target.first || target.second >= 0) && partially_overlap(*self, t))
      fail_partial_overlap();
}

// ---- recording ----

void Capture::source_of(const Tensor& t, InputKind* kind, std::string* name) {
  *kind = segment_index_ > 0 ? InputKind::Materialized : InputKind::External;
  name->clear();
  auto n = names_.find(t.impl());
  if (n != names_.end()) {
    *kind = n->second.first;
    *name = n->second.second;
    return;
  }
  InputKind k;
  if (namer_) {
    Naming naming(this);
    if (namer_->tensor(t, &k, name)) {
      *kind = k;
      return;
    }
  }
  auto c = computed_.find(t.impl());
  if (c != computed_.end() && c->second.first == t.impl()->storage_) *name = c->second.second;
}

void Capture::check_not_naming() const {
  if (naming_)
    fail(ErrorKind::Runtime,
         "a dyn op ran while the compiled function's sources were being named (user code reached from an "
         "attribute or item); the op was not recorded");
}

int Capture::value_of(const Tensor& t) {
  TensorImpl* p = t.impl();
  if (p->capture_ == this) return p->lazy_value_;
  auto it = inputs_.find(p);
  if (it != inputs_.end()) return it->second;
  InputKind kind;
  std::string name;
  source_of(t, &kind, &name);
  int id = seg_.add_input(t, kind, std::move(name));
  inputs_.emplace(p, id);
  // Dims marked dynamic; with dynamic=True, every dim of an argument (parameters stay static).
  uint8_t marks = p->dynamic_dims_;
  if (fn_->options().dynamic == 1 && (kind == InputKind::Argument || kind == InputKind::External))
    marks = static_cast<uint8_t>((1u << t.ndim()) - 1);
  if (fn_->options().dynamic != 0) seg_.values[id].dynamic_dims = marks;
  return id;
}

AttrsRef Capture::share_attrs(const Attrs& a) {
  thread_local std::string key;
  key.clear();
  put_attrs(a, true, &key);
  size_t h = std::hash<std::string_view>()(key);
  auto [lo, hi] = attrs_pool_.equal_range(h);
  for (auto it = lo; it != hi; ++it)
    if (attrs_equal(it->second, a, true)) return it->second;
  if (attrs_pool_.size() >= 4096) attrs_pool_.clear();
  AttrsRef r(a);
  attrs_pool_.emplace(h, r);
  return r;
}

std::vector<Tensor> Capture::record_node(OpId op, std::span<const Tensor> in, const Attrs& a, const OutMeta* metas,
                                         const Tensor* self) {
  const OpDef& d = op_def(op);
  Node n;
  n.op = op;
  n.attrs = share_attrs(a);
  // Everything this node adds comes after values_before, the target's first entry included: a
  // call that diverges at this node keeps exactly the values before it.
  n.values_before = static_cast<int>(seg_.values.size());
  n.default_dtype = default_float_dtype();
  n.autocast = autocast_dtype();
  n.where = current_source();
  n.inputs.reserve(in.size());
  for (const Tensor& t : in) n.inputs.push_back(value_of(t));
  int target = self ? value_of(*self) : -1;
  n.target = target;
  int k = static_cast<int>(seg_.nodes.size());
  for (int o = 0; o < d.num_outputs; ++o) {
    Value v;
    v.dtype = metas[o].dtype;
    v.shape = metas[o].shape;
    if (d.cls == OpClass::View || target >= 0) {
      v.strides = metas[o].strides;
      v.offset = metas[o].offset;
    } else {
      v.strides = contiguous_strides(v.shape);
    }
    v.producer = k;
    seg_.values.push_back(std::move(v));
    n.outputs.push_back(static_cast<int>(seg_.values.size()) - 1);
  }
  if (unsigned values = value_scalars(op, a); values && namer_) {
    const Scalar* sc[] = {&a.scalar, &a.scalar2, &a.scalar3};
    for (int f = 0; f < 3; ++f)
      if (values >> f & 1) {
        ScalarInput si;
        si.node = k;
        si.field = static_cast<uint8_t>(f);
        std::string name;
        if (DerivativeScope::current() >= 0) {
          si.kind = InputKind::Literal;
          name = fmt::format("{} in the derivative of {}", format_scalar(*sc[f]),
                             op_name(static_cast<OpId>(DerivativeScope::current())));
        } else if (Naming naming(this); !namer_->scalar(*sc[f], f == 0 ? a.side : ScalarSide::None, &si.kind, &name)) {
          name.clear();
        }
        // Interned: a loop's constants repeat their names at every node.
        if (!name.empty()) si.name = intern(name);
        seg_.scalar_inputs.push_back(si);
      }
  }
  // Constants by name (`n` (argument) == 1025 in :guards). A literal is named by the code itself
  // and costs no entry: most constants are literals. Only a binary operator's number: its operand
  // is certain, where a call's numbers may be defaults it was not written with (arange's step).
  if (unsigned constants = op_def(op).cls == OpClass::Binary ? constant_scalars(op, a) : 0u;
      constants && namer_ && DerivativeScope::current() < 0) {
    const Scalar* sc[] = {&a.scalar, &a.scalar2, &a.scalar3};
    for (int f = 0; f < 3; ++f) {
      if (!(constants >> f & 1)) continue;
      ScalarInput si;
      si.node = k;
      si.field = static_cast<uint8_t>(f);
      si.constant = true;
      std::string name;
      Naming naming(this);
      if (!namer_->scalar(*sc[f], f == 0 ? a.side : ScalarSide::None, &si.kind, &name) || name.empty() ||
          si.kind == InputKind::Literal)
        continue;
      si.name = intern(name);
      seg_.scalar_inputs.push_back(si);
    }
  }
  seg_.nodes.push_back(std::move(n));
  std::vector<Tensor> outs;
  if (target < 0) make_lazy_outputs(seg_, seg_.nodes.back(), &outs);
  return outs;
}

void Capture::make_lazy_outputs(const Graph& g, const Node& n, std::vector<Tensor>* out, const OutMeta* metas) {
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    int id = n.outputs[o];
    const Value& v = g.values[id];
    auto* impl = metas ? new TensorImpl(nullptr, metas[o].shape, contiguous_strides(metas[o].shape), 0, v.dtype)
                       : new TensorImpl(nullptr, v.shape, v.strides, v.offset, v.dtype);
    impl->capture_ = this;
    impl->lazy_value_ = id;
    lazies_.add(impl);
    out->emplace_back(impl);
  }
}

Storage* Capture::outside_storage_of(int v) {
  const Graph& g = replaying() ? cached_segment().graph : seg_;
  if (v < 0 || v >= static_cast<int>(g.values.size())) return nullptr;
  int root = root_of(g, v);
  if (g.values[root].producer >= 0) return nullptr;  // a buffer made inside the region
  const Tensor& t =
      replaying() ? (root < static_cast<int>(bound_.size()) ? bound_[root] : Tensor()) : seg_.values[root].input();
  return t.defined() ? t.storage() : nullptr;
}

void Capture::bind_target(Tensor& self, int value) {
  TensorImpl* p = self.impl();
  // A tensor from outside the region (or a view of one): its memory changes when the segment
  // runs, so any other view of it must sync before it is read.
  Storage* outside = p->capture_ != this ? p->storage_ : outside_storage_of(p->lazy_value_);
  if (outside && !outside->pending_writes) {
    outside->pending_writes = true;
    pending_.push_back(outside);
  }
  p->capture_ = this;
  p->lazy_value_ = value;
  lazies_.add(p);
}

Tensor Capture::record(OpId op, std::span<const Tensor> in, const Attrs& a) {
  check_not_naming();
  const OpDef& d = op_def(op);
  if (d.cls == OpClass::DataDependent) {
    graph_break(BreakKind::UnsupportedOp, std::string(d.name));
    EagerScope eager;  // the op runs now, on the inputs the break just computed
    return run_op(op, in, a);
  }
  check_record(op, in, a, nullptr);
  if (replaying()) {
    std::vector<Tensor> out = std::move(spare_out_);
    out.clear();
    bool hit = replay_op(op, in, a, nullptr, &out);
    Tensor r = hit ? std::move(out[0]) : Tensor();
    out.clear();
    spare_out_ = std::move(out);
    if (hit) return r;
  }
  OutMeta m;
  d.infer(in, a, &m);
  return record_node(op, in, a, &m, nullptr)[0];
}

std::pair<Tensor, Tensor> Capture::record2(OpId op, std::span<const Tensor> in, const Attrs& a) {
  check_not_naming();
  check_record(op, in, a, nullptr);
  std::vector<Tensor> out;
  if (!(replaying() && replay_op(op, in, a, nullptr, &out))) {
    OutMeta m[2];
    op_def(op).infer(in, a, m);
    out = record_node(op, in, a, m, nullptr);
  }
  return {out[0], out[1]};
}

void Capture::record_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self) {
  check_not_naming();
  check_record(op, in, a, &self);
  // A lazy view of read-only memory has no storage of its own for dispatch to check.
  if (self.impl()->capture_ == this)
    if (Storage* st = outside_storage_of(self.impl()->lazy_value_); st && st->read_only) fail_read_only_write();
  // A write into a lazy tensor's buffer counts as a version of that buffer (Note [versions]); a
  // concrete target's storage is counted by dispatch_into.
  auto count_write = [&](bool was_lazy) {
    if (!was_lazy) return;
    const Graph& g = current_graph();
    int root = root_of(g, self.impl()->lazy_value_);
    if (g.values[root].producer >= 0)
      ++writes_[root];
    else if (Storage* st = outside_storage_of(root))
      ++st->version;
  };
  bool was_lazy = self.impl()->capture_ == this;
  if (replaying() && replay_op(op, in, a, &self, nullptr)) return count_write(was_lazy);
  OutMeta m;
  op_def(op).infer(in, a, &m);
  check_into(m, self);
  OutMeta geom{self.dtype(), self.shape(), self.strides(), self.offset()};
  record_node(op, in, a, &geom, &self);
  bind_target(self, seg_.nodes.back().outputs[0]);
  count_write(was_lazy);
}

}  // namespace dyn
