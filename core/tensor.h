// Tensor: a refcounted view (shape, strides, offset, dtype) of a Storage.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace dyn {

// The element count of a new tensor of this shape; a user error for a negative size or one too
// large. Creation ops check at inference too, so that a traced call fails at the op as eager does.
int64_t check_new_shape(const Dims& shape);

class Capture;
class TensorImpl;
struct AutogradMeta;
// A lazy tensor went away; its capture stops keeping its value (capture.cpp).
void capture_forget(TensorImpl* impl);
// "%3 f32[4, 8] pending: mul(%0, 2.0) at a.py:7" for a lazy tensor (capture.cpp).
std::string capture_describe(const TensorImpl* impl);

// The shared state behind Tensor handles. Views get their own impl over the same storage.
class TensorImpl {
 public:
  TensorImpl(Storage* storage, Dims shape, Dims strides, int64_t offset, DType dtype)
      : storage_(storage), shape_(shape), strides_(strides), offset_(offset), dtype_(dtype) {
    if (is_reduced_float(dtype)) detail::g_reduced_floats_used.store(true, std::memory_order_relaxed);
  }
  ~TensorImpl() {
    if (capture_) capture_forget(this);
    if (storage_) storage_->release();
    if (view_base_ && view_base_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete view_base_;
  }

  // Lazy: the value is pending in a capture (a compile region); data is not readable until the
  // capture syncs. Shape, strides, offset and dtype are already what eager mode would give.
  bool lazy() const { return capture_ != nullptr; }
  bool poisoned() const { return lazy_value_ == kPoisoned; }
  static constexpr int32_t kPoisoned = -2;
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  // (The members are ordered to leave no padding: one impl per tensor and view, 224 bytes.)
  Storage* storage_;
  Dims shape_;
  Dims strides_;    // in elements
  int64_t offset_;  // in elements
  std::shared_ptr<AutogradMeta> autograd_;  // .grad and grad_fn, when there are any
  Capture* capture_ = nullptr;              // set while lazy
  // The capture's list of its live lazy tensors runs through them (LazyList, capture.h).
  TensorImpl* lazy_prev_ = nullptr;
  TensorImpl* lazy_next_ = nullptr;
  // A view op's result: the tensor whose memory it views (never itself such a view), held: an
  // in-place op with autograd gives that tensor the write's history.
  TensorImpl* view_base_ = nullptr;
  std::atomic<int32_t> refs_{1};
  int32_t lazy_value_ = -1;  // the value id in the capture's current segment
  DType dtype_;
  bool requires_grad_ = false;
  bool lazy_listed_ = false;
  uint8_t dynamic_dims_ = 0;  // dims marked dynamic (dyn.mark_dynamic), bit d: compiled calls keep them symbolic
  // A view made with grad mode off: autograd refuses to give it history (as PyTorch).
  bool view_made_without_grad_ = false;
};

// A handle to a TensorImpl; copying shares the tensor (like torch.Tensor objects in Python).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TensorImpl* adopt) : p_(adopt) {}
  Tensor(const Tensor& o) : p_(o.p_) {
    if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
  }
  Tensor(Tensor&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Tensor& operator=(Tensor o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Tensor() { reset(); }
  void reset() {
    if (p_ && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
    p_ = nullptr;
  }

  // Another handle to an impl someone else owns (it gains a reference).
  static Tensor borrow(TensorImpl* impl) {
    impl->refs_.fetch_add(1, std::memory_order_relaxed);
    return Tensor(impl);
  }
  // A fresh contiguous tensor with uninitialized data.
  static Tensor empty(const Dims& shape, DType dtype);
  // A view of this tensor's storage with other geometry.
  Tensor as_strided(const Dims& shape, const Dims& strides, int64_t offset) const;
  // The same elements' bytes read as another dtype of the same size (Tensor.view(dtype)).
  Tensor reinterpret(DType dtype) const;

  bool defined() const { return p_ != nullptr; }
  TensorImpl* impl() const { return p_; }
  const Dims& shape() const { return p_->shape_; }
  const Dims& strides() const { return p_->strides_; }
  int64_t offset() const { return p_->offset_; }
  DType dtype() const { return p_->dtype_; }
  int ndim() const { return p_->shape_.size(); }
  int64_t size(int d) const { return p_->shape_[d]; }
  int64_t numel() const { return numel_of(p_->shape_); }
  Storage* storage() const { return p_->storage_; }
  bool is_contiguous() const;
  bool same_storage(const Tensor& o) const { return p_->storage_ == o.p_->storage_; }

  bool lazy() const { return p_->lazy(); }

  // Address of element [0, ..., 0]. Reading a lazy tensor's data without a sync is a bug of the
  // caller; it raises instead of crashing.
  void* raw_data() const {
    if (!p_->storage_) no_data();
    return static_cast<char*>(p_->storage_->data()) + p_->offset_ * static_cast<int64_t>(itemsize(p_->dtype_));
  }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }

 private:
  [[noreturn]] void no_data() const;
  TensorImpl* p_ = nullptr;
};

}  // namespace dyn
