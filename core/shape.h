// Shapes and strides: a small fixed-capacity vector, so creating a tensor allocates no shape memory.
#pragma once
#include <cassert>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace dyn {

constexpr int kMaxDims = 8;

// Up to kMaxDims int64 values; used for sizes, strides, dim lists and permutations.
class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<int64_t> v) {
    for (int64_t x : v) push_back(x);
  }
  static Dims filled(int n, int64_t v) {
    Dims d;
    for (int i = 0; i < n; ++i) d.push_back(v);
    return d;
  }

  int size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t operator[](int i) const {
    assert(i >= 0 && i < n_);
    return v_[i];
  }
  int64_t& operator[](int i) {
    assert(i >= 0 && i < n_);
    return v_[i];
  }
  const int64_t* begin() const { return v_; }
  const int64_t* end() const { return v_ + n_; }
  int64_t* data() { return v_; }
  const int64_t* data() const { return v_; }
  int64_t back() const { return v_[n_ - 1]; }

  void push_back(int64_t x);  // throws a user error past kMaxDims
  void insert(int pos, int64_t x);
  void erase(int pos);
  void resize(int n, int64_t fill = 0) {
    for (int i = n_; i < n; ++i) v_[i] = fill;
    n_ = static_cast<uint8_t>(n);
  }

  bool operator==(const Dims& o) const {
    if (n_ != o.n_) return false;
    for (int i = 0; i < n_; ++i)
      if (v_[i] != o.v_[i]) return false;
    return true;
  }
  bool operator!=(const Dims& o) const { return !(*this == o); }

 private:
  int64_t v_[kMaxDims] = {};
  uint8_t n_ = 0;
};

// A Dims interned for the process: one pointer where a graph keeps a value's shape or strides.
// A long trace repeats a few shapes, so its values share them instead of carrying 72 bytes each.
// The table only grows: by the distinct shapes a process records (as interned names and source
// stacks grow by the distinct lines and names), not by calls or nodes.
const Dims* intern_dims(const Dims& d);
const Dims* interned_no_dims();  // intern_dims(Dims{}), without the lookup
class DimsRef {
 public:
  DimsRef() : p_(interned_no_dims()) {}
  DimsRef(const Dims& d) : p_(intern_dims(d)) {}  // NOLINT: stands in for a Dims
  DimsRef& operator=(const Dims& d) {
    p_ = intern_dims(d);
    return *this;
  }
  operator const Dims&() const { return *p_; }  // NOLINT
  const Dims& get() const { return *p_; }
  int size() const { return p_->size(); }
  bool empty() const { return p_->empty(); }
  int64_t operator[](int i) const { return (*p_)[i]; }
  const int64_t* begin() const { return p_->begin(); }
  const int64_t* end() const { return p_->end(); }
  const int64_t* data() const { return p_->data(); }
  int64_t back() const { return p_->back(); }
  bool operator==(const DimsRef& o) const { return p_ == o.p_; }  // interned: equal values, one address
  bool operator==(const Dims& o) const { return *p_ == o; }

 private:
  const Dims* p_;
};

int64_t numel_of(const Dims& shape);
Dims contiguous_strides(const Dims& shape);
// "[2, 3]"
std::string dims_str(const Dims& d);
// Wraps a possibly negative dim into [0, ndim); IndexError like PyTorch when out of range.
int wrap_dim(int64_t dim, int ndim);
// The shape two shapes broadcast to; PyTorch's error when they cannot.
Dims broadcast_shapes(const Dims& a, const Dims& b);
// Strides that view `shape`-strided data as broadcast to `target` (stride 0 on expanded dims).
Dims broadcast_strides(const Dims& shape, const Dims& strides, const Dims& target);

}  // namespace dyn
