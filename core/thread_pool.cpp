// A fixed pool of worker threads for splitting large kernels.
#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
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
    // Each job has its own counters: a worker still holding an old job can only find it drained.
    auto job = std::make_shared<Job>();
    job->begin = begin, job->end = end, job->grain = grain, job->nchunks = nchunks, job->fn = fn, job->ctx = ctx;
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = job;
      generation_.fetch_add(1);
    }
    cv_.notify_all();
    t_in_parallel = true;
    drain(*job);
    t_in_parallel = false;
    if (spin_until([&] { return job->done.load() == job->nchunks; })) return;
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return job->done.load() == job->nchunks; });
  }

 private:
  struct Job {
    int64_t begin = 0, end = 0, grain = 1, nchunks = 0;
    void (*fn)(void*, int64_t, int64_t) = nullptr;
    void* ctx = nullptr;
    std::atomic<int64_t> next{0}, done{0};
  };

  void drain(Job& job) {
    for (;;) {
      int64_t c = job.next.fetch_add(1);
      if (c >= job.nchunks) return;
      job.fn(job.ctx, job.begin + c * job.grain, std::min(job.end, job.begin + (c + 1) * job.grain));
      if (job.done.fetch_add(1) + 1 == job.nchunks) {
        std::lock_guard<std::mutex> lk(mu_);
        done_cv_.notify_all();
      }
    }
  }

  // Note [spinning before sleeping]: a worker sleeping on the condition variable takes 20 to 50 us
  // to wake on this VM, as long as a 131k-element GELU at one thread; the caller waiting for the
  // last chunk likewise. So each polls for kSpin first: a worker stays awake between the kernels
  // of a plan that follow each other, and a short job costs no wake-up. It costs a core busy for
  // kSpin after the last job, as OpenMP's runtimes do for longer.
  static constexpr auto kSpin = std::chrono::microseconds(100);

  template <typename Ready>
  static bool spin_until(Ready ready) {
    auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0;; ++i) {
      if (ready()) return true;
      __builtin_ia32_pause();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return ready();
    }
  }

  void work() {
    t_in_parallel = true;
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> job;
      spin_until([&] { return stop_.load() || generation_.load() != seen; });
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_.load() || generation_.load() != seen; });
        if (stop_) return;
        seen = generation_.load();
        job = job_;
      }
      if (job) drain(*job);
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
  std::shared_ptr<Job> job_;
  std::atomic<uint64_t> generation_{0};  // written under mu_; read without it while spinning
  std::atomic<bool> stop_{false};
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
