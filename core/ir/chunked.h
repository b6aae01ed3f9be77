// Chunked: a growable array in chunks. Appending never moves what is there (a growing trace is
// never copied, and never held twice while it is), and indexing is a few bit operations
// (std::deque's is a division and an out-of-line call, a tenth of a replayed op). The first chunks
// double from 16 elements, so a small graph stays small; after them every chunk has 2^kShift.
#pragma once
#include <bit>
#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace dyn {

template <typename T, int kShift = 8>
class Chunked {
  static constexpr int kFirstShift = 4;  // the first chunk holds 16, the next 32, ... up to kChunk
  static constexpr size_t kFirst = size_t{1} << kFirstShift;
  static constexpr size_t kChunk = size_t{1} << kShift;
  static constexpr size_t kMask = kChunk - 1;
  static constexpr size_t kGrowing = kShift - kFirstShift;  // chunks before the fixed-size ones
  static constexpr size_t kSmall = kChunk - kFirst;         // elements in them
  static_assert(kShift > kFirstShift);

 public:
  template <typename C, typename V>
  struct Iter {
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;
    C* c = nullptr;
    size_t i = 0;
    V& operator*() const { return (*c)[i]; }
    V* operator->() const { return &(*c)[i]; }
    V& operator[](difference_type k) const { return (*c)[i + static_cast<size_t>(k)]; }
    Iter& operator++() {
      ++i;
      return *this;
    }
    Iter operator++(int) { return {c, i++}; }
    Iter& operator--() {
      --i;
      return *this;
    }
    Iter operator--(int) { return {c, i--}; }
    Iter& operator+=(difference_type k) {
      i += static_cast<size_t>(k);
      return *this;
    }
    Iter& operator-=(difference_type k) {
      i -= static_cast<size_t>(k);
      return *this;
    }
    Iter operator+(difference_type k) const { return {c, i + static_cast<size_t>(k)}; }
    friend Iter operator+(difference_type k, Iter it) { return it + k; }
    Iter operator-(difference_type k) const { return {c, i - static_cast<size_t>(k)}; }
    difference_type operator-(const Iter& o) const {
      return static_cast<difference_type>(i) - static_cast<difference_type>(o.i);
    }
    bool operator==(const Iter& o) const { return i == o.i; }
    bool operator!=(const Iter& o) const { return i != o.i; }
    bool operator<(const Iter& o) const { return i < o.i; }
    bool operator>(const Iter& o) const { return i > o.i; }
    bool operator<=(const Iter& o) const { return i <= o.i; }
    bool operator>=(const Iter& o) const { return i >= o.i; }
  };
  using iterator = Iter<Chunked, T>;
  using const_iterator = Iter<const Chunked, const T>;
  using value_type = T;

  Chunked() = default;
  Chunked(const Chunked& o) { *this = o; }
  Chunked(Chunked&& o) noexcept : chunks_(std::move(o.chunks_)), n_(o.n_), cap_(o.cap_) {
    o.chunks_.clear();
    o.n_ = o.cap_ = 0;
  }
  Chunked& operator=(const Chunked& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Chunked& operator=(Chunked&& o) noexcept {
    if (this != &o) {
      clear();
      chunks_ = std::move(o.chunks_);
      n_ = o.n_, cap_ = o.cap_;
      o.chunks_.clear();
      o.n_ = o.cap_ = 0;
    }
    return *this;
  }
  ~Chunked() { clear(); }

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](size_t i) { return *at(i); }
  const T& operator[](size_t i) const { return *at(i); }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[n_ - 1]; }
  const T& back() const { return (*this)[n_ - 1]; }
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, n_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, n_}; }

  template <typename... A>
  T& emplace_back(A&&... a) {
    if (n_ == cap_) {
      size_t c = chunks_.size(), len = c < kGrowing ? kFirst << c : kChunk;
      chunks_.push_back(Storage(static_cast<T*>(::operator new(sizeof(T) * len))));
      cap_ += len;
    }
    T* p = at(n_);
    new (p) T(std::forward<A>(a)...);
    ++n_;
    return *p;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }

  template <typename It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) emplace_back(*first);
  }
  void clear() {
    for (size_t i = n_; i > 0; --i) (*this)[i - 1].~T();
    n_ = 0;
    cap_ = 0;
    chunks_.clear();
  }

 private:
  T* at(size_t i) const {
    if (i < kSmall) {
      size_t j = i + kFirst;
      size_t c = static_cast<size_t>(std::bit_width(j)) - 1 - kFirstShift;
      return chunks_[c].get() + (j - (kFirst << c));
    }
    size_t k = i - kSmall;
    return chunks_[kGrowing + (k >> kShift)].get() + (k & kMask);
  }
  struct Free {
    void operator()(T* p) const { ::operator delete(p); }
  };
  using Storage = std::unique_ptr<T[], Free>;
  std::vector<Storage> chunks_;
  size_t n_ = 0, cap_ = 0;
};

}  // namespace dyn
