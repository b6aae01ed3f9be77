// Dynamic shapes at a recompile: the segment a call recorded becomes a dynamic one where an
// earlier entry traced the same ops with other sizes (automatic dynamic shapes), or where sizes
// were marked dynamic. See Note [dynamic shapes] in core/ir/symbolic.cpp.
#include <algorithm>

#include <fmt/format.h>

#include "core/capture/capture.h"

namespace dyn {

void Capture::generalize_segment() {
  if (fn_->options().dynamic == 0 || new_entry_ < 0 || seg_.nodes.empty()) return;
  size_t before = syms_.size();
  bool paired = false;
  auto pair_with = [&](int e) {
    if (e < 0 || e >= fn_->num_entries()) return false;
    const Entry& old = fn_->entries_[e];
    if (segment_index_ >= static_cast<int>(old.segments.size())) return false;
    return generalize_pair(old.segments[segment_index_]->graph, &seg_, &syms_, &sym_now_);
  };
  // Symbols come from one earlier trace at a time: once a segment of this call was compared with
  // an entry, the later ones are compared with the same entry's.
  if (pair_entry_ >= 0) {
    paired = pair_with(pair_entry_);
  } else if (((prefix_.empty() && new_segments_.empty()) || syms_.empty()) &&
             std::any_of(failures_.begin(), failures_.end(),
                         [](const auto& f) { return f.kind != GuardKind::GlobalState; })) {
    // The newest entry of the same ops with other sizes. What this call kept of a dynamic entry's
    // first segment (and its symbols) is compared afresh: a size that entry guessed wrong (s0
    // where s0 - 1 was meant) is then learned from the two traces. Only while nothing of this
    // call uses the symbols yet: a segment it recorded before keeps their numbers. (Only when there
    // is an entry to compare with: the copy costs as much memory as the trace.)
    Graph kept = seg_;
    std::vector<SymInfo> kept_syms = syms_;
    SymValues kept_now = sym_now_;
    for (auto it = failures_.rbegin(); it != failures_.rend() && !paired; ++it) {
      if (it->kind == GuardKind::GlobalState) continue;
      clear_symbols(&seg_);
      syms_.clear();
      sym_now_.clear();
      before = 0;
      if (pair_with(it->entry)) {
        paired = true;
        pair_entry_ = it->entry;
      }
    }
    if (!paired) {
      seg_ = std::move(kept);
      syms_ = std::move(kept_syms);
      sym_now_ = std::move(kept_now);
      before = syms_.size();
    }
  }
  if (!paired) generalize_by_value(&seg_, &syms_, &sym_now_);
  if (syms_.size() == before || recompile_event_ < 0) return;
  Event* ev = CaptureLog::get().mutable_event(recompile_event_);
  if (!ev) return;
  // A size already symbolic in the entry this one was generalized against stays dynamic: only
  // the others became dynamic at this recompile.
  const std::vector<SymInfo>* had = paired && pair_entry_ >= 0 ? &fn_->entries_[pair_entry_].symbols : nullptr;
  std::string made, kept;
  std::vector<std::string> made_sources;
  for (size_t i = before; i < syms_.size(); ++i) {
    if (had && std::any_of(had->begin(), had->end(), [&](const SymInfo& s) { return s.source == syms_[i].source; })) {
      kept += fmt::format("{}{} stays dynamic as s{} (as in {}[{}])", kept.empty() ? "" : ", ", syms_[i].source, i,
                          fn_->name(), pair_entry_);
      continue;
    }
    made += fmt::format("{}{} became dynamic as s{}", made.empty() ? "" : ", ", syms_[i].source, i);
    if (syms_[i].sample >= 0) made += fmt::format(" (sizes {} and {} seen)", syms_[i].sample, syms_[i].traced);
    made_sources.push_back(syms_[i].source);
  }
  // The dynamic-shape step started from the paired entry: the recompile's cause is its failure.
  if (paired && pair_entry_ != ev->closest &&
      std::any_of(ev->failures.begin(), ev->failures.end(),
                  [&](const GuardFailure& f) { return f.entry == pair_entry_; })) {
    auto it = fn_->recompile_causes.find(recompile_cause_);
    if (it != fn_->recompile_causes.end() && --it->second == 0) fn_->recompile_causes.erase(it);
    ev->closest = pair_entry_;
    recompile_cause_ = cause_of(ev->failures, ev->closest).key;
    ++fn_->recompile_causes[recompile_cause_];
    if (const GuardFailure* near = closest_failure(ev->failures, ev->closest)) ev->where = near->where;
  }
  if (!kept.empty()) ev->reason += "; " + kept;
  if (made.empty()) return;
  // The recompile that made sizes dynamic says so, and so do the hints of the sizes it made
  // dynamic, in the recompile and in the guard failures logged before it knew.
  CaptureLog& log = CaptureLog::get();
  auto settle = [&](GuardFailure& f) {
    if (f.size_dim >= 0 && std::find(made_sources.begin(), made_sources.end(),
                                     fmt::format("{}.size({})", f.size_input, f.size_dim)) != made_sources.end())
      f.hint = size_hint(f, fn_->options().dynamic, true, fn_->name());
  };
  for (GuardFailure& f : ev->failures) settle(f);
  for (int64_t number : guard_events_)
    if (Event* g = log.mutable_event(number); g && g->kind == EventKind::GuardFailure) {
      settle(g->guard);
      g->reason = fmt::format("{}: {}", guard_kind_name(g->guard.kind), g->guard.str());
    }
  // A later segment of the call may make more sizes dynamic: the event lists all of them.
  ev->reason += "; " + made;
  ev->dynamic += (ev->dynamic.empty() ? "" : ", ") + made;
  // The failure lines again, with the settled hints (not for a function compiled anew, whose one
  // "failure" is no entry's).
  bool entries =
      std::all_of(ev->failures.begin(), ev->failures.end(), [](const GuardFailure& f) { return f.entry >= 0; });
  std::string lines =
      entries ? failure_lines(fn_->name(), ev->failures) : ev->details.substr(0, ev->details.find("dynamic shapes: "));
  while (!lines.empty() && lines.back() == '\n') lines.pop_back();
  ev->details = (lines.empty() ? "" : lines + "\n") + "dynamic shapes: " + ev->dynamic +
                "; this entry serves every size >= 2 of it";
}

}  // namespace dyn
