// A fixed pool of worker threads for splitting large kernels (dyn.set_num_threads).
#pragma once
#include <cstdint>
#include <utility>

namespace dyn {

int get_num_threads();
// n >= 1; takes effect for the next parallel_for.
void set_num_threads(int n);

namespace detail {
void parallel_for_impl(int64_t begin, int64_t end, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx);
}

// Calls f(b, e) over disjoint chunks covering [begin, end), each at least `grain` long, possibly in
// parallel. Chunk boundaries depend only on the range and grain, never on the thread count, so
// results that depend on chunking (reductions) are the same with any number of threads.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& f) {
  if (end - begin <= grain) {
    if (end > begin) f(begin, end);
    return;
  }
  auto thunk = [](void* ctx, int64_t b, int64_t e) { (*static_cast<F*>(ctx))(b, e); };
  detail::parallel_for_impl(begin, end, grain, thunk, &f);
}

}  // namespace dyn
