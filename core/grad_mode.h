// Grad mode: whether ops record autograd history. Global state the capture guards and the
// autograd layer reads, so it lives below both.
#pragma once

namespace dyn {

namespace detail {
inline thread_local bool grad_enabled = true;
}
inline bool grad_enabled() { return detail::grad_enabled; }
inline void set_grad_enabled(bool on) { detail::grad_enabled = on; }

// Turns off gradient recording while it lives (backward itself runs under it).
class NoGradScope {
 public:
  NoGradScope() : saved_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradScope() { set_grad_enabled(saved_); }
  NoGradScope(const NoGradScope&) = delete;
  NoGradScope& operator=(const NoGradScope&) = delete;

 private:
  bool saved_;
};

// Sets grad mode while it lives.
class GradModeScope {
 public:
  explicit GradModeScope(bool on) : saved_(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeScope() { set_grad_enabled(saved_); }
  GradModeScope(const GradModeScope&) = delete;
  GradModeScope& operator=(const GradModeScope&) = delete;

 private:
  bool saved_;
};

}  // namespace dyn
