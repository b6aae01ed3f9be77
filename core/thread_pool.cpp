// A fixed pool of worker threads for splitting large kernels.
#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace dyn {

namespace {

thread_local bool t_in_parallel = false;

class Pool {
 public:
  explicit Pool(int n) { resize(n); }
  ~Pool() { stop_workers(); }

  int size() const { return nthreads_; }

  void resize(int n) {
    std::lock_guard<std::mutex> submit(submit_mu_);
    stop_workers();
    nthreads_ = std::max(1, n);
    stop_ = false;
    for (int i = 1; i < nthreads_; ++i) workers_.emplace_back([this] { work(); });
  }

  void run(int64_t begin, int64_t end, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx) {
    int64_t nchunks = (end - begin + grain - 1) / grain;
    if (nthreads_ == 1 || t_in_parallel) {
      for (int64_t c = 0; c < nchunks; ++c) fn(ctx, begin + c * grain, std::min(end, begin + (c + 1) * grain));
      return;
    }
    std::lock_guard<std::mutex> submit(submit_mu_);
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = Job{begin, end, grain, nchunks, fn, ctx};
      next_.store(0);
      done_.store(0);
      ++generation_;
    }
    cv_.notify_all();
    t_in_parallel = true;
    drain();
    t_in_parallel = false;
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return done_.load() == job_.nchunks; });
  }

 private:
  struct Job {
    int64_t begin = 0, end = 0, grain = 1, nchunks = 0;
    void (*fn)(void*, int64_t, int64_t) = nullptr;
    void* ctx = nullptr;
  };

  void drain() {
    for (;;) {
      int64_t c = next_.fetch_add(1);
      if (c >= job_.nchunks) return;
      job_.fn(job_.ctx, job_.begin + c * job_.grain, std::min(job_.end, job_.begin + (c + 1) * job_.grain));
      if (done_.fetch_add(1) + 1 == job_.nchunks) {
        std::lock_guard<std::mutex> lk(mu_);
        done_cv_.notify_all();
      }
    }
  }

  void work() {
    t_in_parallel = true;
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      drain();
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  int nthreads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex submit_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  Job job_;
  std::atomic<int64_t> next_{0}, done_{0};
  uint64_t generation_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return p;
}

}  // namespace

int get_num_threads() { return pool().size(); }
void set_num_threads(int n) { pool().resize(n); }

namespace detail {
void parallel_for_impl(int64_t begin, int64_t end, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx) {
  pool().run(begin, end, grain, fn, ctx);
}
}  // namespace detail

}  // namespace dyn
