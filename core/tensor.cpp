// Tensor, Storage and shape helpers.
#include "core/tensor.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/error.h"

namespace dyn {

// ---- Dims ----

void Dims::push_back(int64_t x) {
  DYN_CHECK(n_ < kMaxDims, ErrorKind::Runtime, "dyn supports at most {} dimensions", kMaxDims);
  v_[n_++] = x;
}

void Dims::insert(int pos, int64_t x) {
  DYN_CHECK(n_ < kMaxDims, ErrorKind::Runtime, "dyn supports at most {} dimensions", kMaxDims);
  for (int i = n_; i > pos; --i) v_[i] = v_[i - 1];
  v_[pos] = x;
  ++n_;
}

void Dims::erase(int pos) {
  for (int i = pos; i + 1 < n_; ++i) v_[i] = v_[i + 1];
  --n_;
}

namespace {
struct DimsHash {
  size_t operator()(const Dims& d) const {
    size_t h = static_cast<size_t>(d.size());
    for (int64_t x : d) h = h * 1000003u ^ std::hash<int64_t>()(x);
    return h;
  }
};
}  // namespace

const Dims* intern_dims(const Dims& d) {
  // Leaked on purpose: graphs held by other statics may still read them at exit.
  static std::mutex* mu = new std::mutex;
  static auto* table = new std::unordered_set<Dims, DimsHash>();
  std::lock_guard<std::mutex> lock(*mu);
  return &*table->insert(d).first;
}

const Dims* interned_no_dims() {
  static const Dims* none = intern_dims(Dims{});
  return none;
}

int64_t numel_of(const Dims& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Dims contiguous_strides(const Dims& shape) {
  Dims st = Dims::filled(shape.size(), 1);
  int64_t acc = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= shape[i] > 1 ? shape[i] : 1;
  }
  return st;
}

std::string dims_str(const Dims& d) {
  std::string s = "[";
  for (int i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  return s + "]";
}

int wrap_dim(int64_t dim, int ndim) {
  int64_t n = ndim > 0 ? ndim : 1;  // a 0-d tensor accepts dim 0 and -1, as in PyTorch
  if (dim < -n || dim >= n)
    fail(ErrorKind::Index, "Dimension out of range (expected to be in range of [{}, {}], but got {})", -n, n - 1, dim);
  return static_cast<int>(dim < 0 ? dim + n : dim);
}

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  int n = std::max(a.size(), b.size());
  Dims out = Dims::filled(n, 1);
  for (int i = 0; i < n; ++i) {
    int ia = a.size() - n + i, ib = b.size() - n + i;
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail(ErrorKind::Runtime,
           "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}", sa, sb, i);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

Dims broadcast_strides(const Dims& shape, const Dims& strides, const Dims& target) {
  int n = target.size();
  Dims out = Dims::filled(n, 0);
  for (int i = 0; i < n; ++i) {
    int j = shape.size() - n + i;
    if (j >= 0 && shape[j] == target[i]) out[i] = shape[j] == 1 ? 0 : strides[j];
  }
  return out;
}

// ---- Storage ----

namespace {
constexpr size_t kHeader = 64;  // keeps data 64-byte aligned behind the header
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeThreshold = size_t{4} << 20;
}  // namespace

namespace {
// Buffers from 64 KiB up are kept for reuse (below, malloc's own free lists do that job); from
// 128 KiB glibc maps each one fresh from the kernel, which zeroes its pages every time.
constexpr size_t kCacheThreshold = size_t{64} << 10;
size_t huge_size(size_t total) { return (total + kHugePage - 1) / kHugePage * kHugePage; }
// The size a buffer is allocated (and cached) at: whole huge pages, or whole 4 KiB pages.
size_t block_size(size_t total) { return total >= kHugeThreshold ? huge_size(total) : (total + 4095) / 4096 * 4096; }

// Freed buffers of 64 KiB and more, kept for the next allocation of the same size: the kernel
// zeroes every page of fresh memory (about 4 ms for 64 MiB), more than a memory-bound kernel's
// own work on it, and a training step or a replayed graph asks for the same sizes call after
// call. Bounded by DYN_CACHE_MB (default 1024; 0 turns it off): when full, a freed block goes back
// to the system.
class LargeBlockCache {
 public:
  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(m_);
    auto it = blocks_.find(size);
    if (it == blocks_.end() || it->second.empty()) return nullptr;
    void* mem = it->second.back();  // the most recently freed: likeliest still in cache
    it->second.pop_back();
    bytes_ -= size;
    return mem;
  }
  void give(void* mem, size_t size) {
    {
      std::lock_guard<std::mutex> lock(m_);
      if (bytes_ + size <= limit_) {
        blocks_[size].push_back(mem);
        bytes_ += size;
        return;
      }
    }
    std::free(mem);
  }

 private:
  std::mutex m_;
  std::unordered_map<size_t, std::vector<void*>> blocks_;
  size_t bytes_ = 0;
  size_t limit_ = [] {
    const char* mb = std::getenv("DYN_CACHE_MB");
    return (mb ? static_cast<size_t>(std::strtoull(mb, nullptr, 10)) : size_t{1024}) << 20;
  }();
};

LargeBlockCache& large_blocks() {
  static auto* cache = new LargeBlockCache();  // never destroyed: storages may be freed at exit
  return *cache;
}
}  // namespace

namespace {
std::atomic<int64_t> g_alloc_countdown{-1};
}

void fail_allocation_after(int64_t n) { g_alloc_countdown.store(n < 0 ? -1 : n, std::memory_order_relaxed); }

Storage* Storage::allocate(size_t nbytes) {
  if (g_alloc_countdown.load(std::memory_order_relaxed) >= 0 &&
      g_alloc_countdown.fetch_sub(1, std::memory_order_relaxed) == 0)
    throw std::bad_alloc();
  size_t total = (kHeader + nbytes + 63) / 64 * 64;
  // Large buffers are 2 MiB aligned and advised as huge pages: a fresh 64 MiB tensor then costs
  // 32 page faults instead of 16384, which dominates a memory-bound kernel's time (numpy does this too).
  bool huge = total >= kHugeThreshold, cached = total >= kCacheThreshold;
  void* mem = cached ? large_blocks().take(block_size(total)) : nullptr;
  if (!mem) {
    mem = huge ? std::aligned_alloc(kHugePage, block_size(total))
               : std::aligned_alloc(64, cached ? block_size(total) : total);
    if (!mem) throw std::bad_alloc();
    if (huge) madvise(mem, total, MADV_HUGEPAGE);
  }
  static_assert(sizeof(Storage) <= kHeader);
  auto* s = new (mem) Storage();
  s->data_ = static_cast<char*>(mem) + kHeader;
  s->nbytes_ = nbytes;
  return s;
}

Storage* Storage::wrap(void* data, size_t nbytes, void (*release)(void*), void* ctx) {
  void* mem = std::aligned_alloc(64, kHeader);
  if (!mem) throw std::bad_alloc();
  auto* s = new (mem) Storage();
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->release_fn_ = release;
  s->release_ctx_ = ctx;
  return s;
}

void Storage::release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  bool owned = !release_fn_;
  size_t total = (kHeader + nbytes_ + 63) / 64 * 64;
  if (release_fn_) release_fn_(release_ctx_);
  this->~Storage();
  if (owned && total >= kCacheThreshold)
    large_blocks().give(this, block_size(total));
  else
    std::free(this);
}

// ---- Tensor ----

int64_t check_new_shape(const Dims& shape) {
  for (int64_t s : shape)
    DYN_CHECK(s >= 0, ErrorKind::Runtime, "Trying to create tensor with negative dimension {}: {}", s, dims_str(shape));
  int64_t n = 1;
  for (int64_t s : shape)
    DYN_CHECK(!__builtin_mul_overflow(n, s, &n) && n <= (int64_t{1} << 56), ErrorKind::Runtime,
              "a tensor of shape {} has too many elements", dims_str(shape));
  return n;
}

Tensor Tensor::empty(const Dims& shape, DType dtype) {
  int64_t n = check_new_shape(shape);
  Storage* st = Storage::allocate(static_cast<size_t>(n) * itemsize(dtype));
  return Tensor(new TensorImpl(st, shape, contiguous_strides(shape), 0, dtype));
}

Tensor Tensor::as_strided(const Dims& shape, const Dims& strides, int64_t offset) const {
  if (!p_->storage_) no_data();
  p_->storage_->retain();
  return Tensor(new TensorImpl(p_->storage_, shape, strides, offset, p_->dtype_));
}

Tensor Tensor::reinterpret(DType dtype) const {
  DYN_CHECK(itemsize(dtype) == itemsize(p_->dtype_), ErrorKind::Runtime,
            "view(dtype): dyn views a tensor as a dtype of the same size only ({} is {} bytes, {} is {}); use "
            ".to(dtype) to convert the values",
            dtype_name(p_->dtype_), itemsize(p_->dtype_), dtype_name(dtype), itemsize(dtype));
  if (!p_->storage_) no_data();
  p_->storage_->retain();
  return Tensor(new TensorImpl(p_->storage_, p_->shape_, p_->strides_, p_->offset_, dtype));
}

void Tensor::no_data() const {
  if (p_->lazy())
    fail(ErrorKind::Runtime,
         "this tensor is {} in the graph being captured, which runs when the script goes on; computing with it "
         "now would add to that graph, so it is not done while stopped: :continue runs the graph, :graph shows "
         "it so far",
         capture_describe(p_));
  if (p_->poisoned())
    fail(ErrorKind::Runtime,
         "this tensor has no value: it was made after an op that raised an exception in the same compiled graph "
         "(see that call's traceback), so eager mode would have stopped before making it");
  fail(ErrorKind::Runtime, "internal error: the data of a lazy tensor was read without a sync");
}

bool Tensor::is_contiguous() const {
  int64_t expect = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    int64_t s = shape()[i];
    if (s == 1) continue;
    if (strides()[i] != expect) return false;
    expect *= s;
  }
  return true;
}

}  // namespace dyn
