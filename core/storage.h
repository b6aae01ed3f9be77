// Storage: one refcounted, 64-byte aligned buffer that tensors and their views share.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dyn {

// Fault injection for tests: the n-th fresh allocation from now (0: the next) throws
// std::bad_alloc, as if memory ran out; once, then allocations succeed again. -1 disarms.
void fail_allocation_after(int64_t n);

class Storage {
 public:
  // Owns nbytes of fresh memory, allocated together with this header.
  static Storage* allocate(size_t nbytes);
  // Borrows memory owned elsewhere (a numpy array); release(ctx) runs when the last user goes.
  static Storage* wrap(void* data, size_t nbytes, void (*release)(void*), void* ctx);

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }

  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  int64_t use_count() const { return refs_.load(std::memory_order_relaxed); }
  // An in-place op recorded in a compile region will write here when its segment runs: readers
  // must sync first.
  bool pending_writes = false;
  // Bumped by every in-place write: autograd checks that values it saved were not changed since.
  int64_t version = 0;
  // Memory another library lent read-only (a read-only numpy array): in-place ops refuse it.
  bool read_only = false;
  // The op of the last in-place write with autograd history here (an OpId, -1: none): autograd's
  // error for a saved value written since names it, as PyTorch names the tensor's grad_fn.
  int16_t last_history_op = -1;
  void release();

 private:
  Storage() = default;
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  void (*release_fn_)(void*) = nullptr;
  void* release_ctx_ = nullptr;
  std::atomic<int64_t> refs_{1};
};

}  // namespace dyn
