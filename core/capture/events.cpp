// Events: why a segment was cut, and the recompile, guard-failure, fallback, compile and
// cache-hit records the log keeps (one builder, Capture::emit).
#include "core/capture/capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/run.h"

namespace dyn {

// ---- breaks ----

std::string break_reason(BreakKind kind, const std::string& what) {
  switch (kind) {
    case BreakKind::DataDependentBranch:
      return "Python needed the truth value of a tensor (data-dependent control flow)";
    case BreakKind::Item:
      return "Python needed the value of a tensor as a number (" + what + ")";
    case BreakKind::ToList:
      return "Python needed the values of a tensor as a list (.tolist())";
    case BreakKind::Numpy:
      return "Python needed the data of a tensor as a numpy array (" + what + ")";
    case BreakKind::Print:
      return "Python needed the values of a tensor to print it (" + what + ")";
    case BreakKind::UnsupportedOp:
      return "op '" + what + "' has no lazy form: its output shape depends on the data";
    case BreakKind::ExplicitSync:
      break;
  }
  return "explicit sync (dyn.sync())";
}

std::string break_hint(BreakKind kind) {
  switch (kind) {
    case BreakKind::DataDependentBranch:
      return "compute both branches and pick with dyn.where(cond, a, b), or move the check out of the compiled "
             "function";
    case BreakKind::Item:
      return "keep the value as a tensor inside the compiled function; call .item() on what it returns";
    case BreakKind::ToList:
    case BreakKind::Numpy:
      return "return the tensor from the compiled function and convert it outside";
    case BreakKind::Print:
      return "print after the compiled function returns, or look at the graph with dyn.debug.graphs()";
    case BreakKind::UnsupportedOp:
      return "keep shapes static, e.g. dyn.where(mask, x, 0) instead of x[mask]";
    case BreakKind::ExplicitSync:
      break;
  }
  return "dyn.sync() cuts the graph on purpose; remove it to keep one graph";
}

Event Capture::event(EventKind kind, int entry, SourceStack where) const {
  Event e;
  e.kind = kind;
  e.fn = fn_->name();
  e.entry = entry;
  e.segment = segment_index_;
  e.where = std::move(where);
  return e;
}

// Compiles are counted where a plan is compiled: an entry may reuse one.
void Capture::emit(Event e) { CaptureLog::get().add_counted(std::move(e)); }

// The moment a call stops matching every entry (or a re-created function starts afresh), it
// records a new trace: that is the recompile, emitted here so that a breakpoint on it stops in the
// frame where the call diverged. Its entry exists only once the call returns; a call that raises
// first makes none, and retract_recompile() takes the event back (the guard failures stay: they
// did happen). Every recompile in the log names an entry that exists.
void Capture::log_recompile() {
  if (failures_.empty() && !(new_entry_ == 0 && fn_->recreated > 0)) return;
  Event ev = event(EventKind::Recompile, new_entry_, SourceStack{});
  if (failures_.empty()) {
    // Not a recompile of this function, but the same definition compiled anew, again.
    ev.where = current_source();
    ev.reason = fmt::format("'{}' was compiled again: dyn.compile was applied to the same function {} times",
                            fn_->name(), fn_->recreated + 1);
    GuardFailure f;
    f.kind = GuardKind::Op;
    f.what = "a new compiled function starts with an empty cache";
    f.where = ev.where;
    f.hint = "it is being re-created each time (dyn.compile inside a loop or a function?); compile it once" +
             (fn_->defined_at.empty() ? std::string() : " (compiled at " + fn_->defined_at + ")") + " and reuse it";
    ev.details = f.hint;
    ev.failures = {f};
    count_recompile(ev.failures, -1);
    emit(std::move(ev));
    recompile_event_ = CaptureLog::get().last_event_number();
    return;
  }
  ev.reason = fmt::format("call {} of '{}': no cache entry served it; new entry {}[{}]", fn_->calls, fn_->name(),
                          fn_->name(), new_entry_);
  std::vector<GuardFailure> firsts;  // one per older entry, in entry order
  for (int k = 0; k < fn_->num_entries(); ++k)
    for (const GuardFailure& f : failures_)
      if (f.entry == k) {
        firsts.push_back(f);
        firsts.back().came = Tensor();  // never kept alive by the log
        break;
      }
  ev.details = failure_lines(fn_->name(), firsts);
  ev.failures = firsts;
  ev.closest = closest_;
  const GuardFailure* near = closest_failure(ev.failures, ev.closest);
  ev.where = near ? near->where : failures_.back().where;
  count_recompile(ev.failures, ev.closest);
  emit(std::move(ev));
  recompile_event_ = CaptureLog::get().last_event_number();
}

void Capture::count_recompile(const std::vector<GuardFailure>& failures, int closest) {
  ++fn_->recompiles;
  recompile_cause_ = cause_of(failures, closest).key;
  ++fn_->recompile_causes[recompile_cause_];
}

void Capture::retract_recompile() {
  if (recompile_event_ < 0) return;
  CaptureLog& log = CaptureLog::get();
  log.counters().recompiles--;
  --fn_->recompiles;
  auto it = fn_->recompile_causes.find(recompile_cause_);
  if (it != fn_->recompile_causes.end() && --it->second == 0) fn_->recompile_causes.erase(it);
  log.erase_event(recompile_event_);
  recompile_event_ = -1;
  // No recompile made a size dynamic: the guard failures logged with it say so no more.
  for (int64_t number : guard_events_)
    if (Event* g = log.mutable_event(number); g && g->kind == EventKind::GuardFailure && g->guard.size_dim >= 0) {
      g->guard.hint = size_hint(g->guard, fn_->options().dynamic, false, fn_->name());
      g->reason = fmt::format("{}: {}", guard_kind_name(g->guard.kind), g->guard.str());
    }
}

}  // namespace dyn
