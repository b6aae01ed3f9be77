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
  // The recompile that made sizes dynamic says so.
  Event* ev = CaptureLog::get().mutable_event(recompile_event_);
  if (!ev) return;
  std::string made;
  for (size_t i = before; i < syms_.size(); ++i) {
    made += fmt::format("{}{} became dynamic as s{}", made.empty() ? "" : ", ", syms_[i].source, i);
    if (syms_[i].sample >= 0) made += fmt::format(" (sizes {} and {} seen)", syms_[i].sample, syms_[i].traced);
  }
  ev->reason += "; " + made;
  ev->dynamic = made;
  ev->details += (ev->details.empty() ? "" : "\n") + std::string("dynamic shapes: ") + made +
                 "; this entry serves every size >= 2 of it";
}

}  // namespace dyn
