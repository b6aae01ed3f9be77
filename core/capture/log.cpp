// The capture log.
#include "core/capture/log.h"

#include <algorithm>
#include <iterator>

namespace dyn {

std::string_view event_kind_name(EventKind k) {
  static constexpr std::string_view kNames[] = {"compile",   "cache_hit", "graph_break", "guard_failure",
                                                "recompile", "fallback",  "lift",        "lift_refused"};
  return kNames[static_cast<int>(k)];
}

std::string_view break_kind_name(BreakKind k) {
  static constexpr std::string_view kNames[] = {"data_dependent_branch", "item",         "tolist", "numpy", "print",
                                                "unsupported_op",        "explicit_sync"};
  return kNames[static_cast<int>(k)];
}

bool parse_entry_id(const std::string& s, std::string* fn, int* entry) {
  if (s.size() < 4 || s.back() != ']') return false;
  size_t open = s.rfind('[');
  if (open == std::string::npos || open == 0 || open + 2 > s.size() - 1) return false;
  int v = 0;
  for (size_t i = open + 1; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || v > 100000000) return false;
    v = v * 10 + (s[i] - '0');
  }
  *fn = s.substr(0, open);
  *entry = v;
  return true;
}

CaptureLog::CaptureLog() : start_(std::chrono::steady_clock::now()) {}

CaptureLog& CaptureLog::get() {
  static CaptureLog log;
  return log;
}

double CaptureLog::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void CaptureLog::add(Event e) {
  e.time = now();
  events_.push_back(std::move(e));
  trim();
  if (listener_) listener_(events_.back(), listener_ctx_);
}

void CaptureLog::add_counted(Event e) {
  // The counter each kind bumps, in EventKind order.
  static constexpr int64_t Counters::*kCounted[] = {nullptr,
                                                    &Counters::cache_hits,
                                                    &Counters::graph_breaks,
                                                    &Counters::guard_failures,
                                                    &Counters::recompiles,
                                                    &Counters::fallbacks};
  auto k = static_cast<size_t>(e.kind);
  if (k < std::size(kCounted) && kCounted[k]) ++(counters_.*kCounted[k]);
  if (e.kind == EventKind::CacheHit)
    add_coalesced(std::move(e));
  else
    add(std::move(e));
}

void CaptureLog::add_foreign_graph(ForeignGraph g) {
  for (ForeignGraph& old : foreign_graphs_)
    if (old.id() == g.id()) {
      old = std::move(g);
      return;
    }
  foreign_graphs_.push_back(std::move(g));
}

void CaptureLog::add_foreign_entry(ForeignEntry e) {
  for (ForeignEntry& old : foreign_entries_)
    if (old.fn == e.fn && old.entry == e.entry) {
      old = std::move(e);
      return;
    }
  foreign_entries_.push_back(std::move(e));
}

void CaptureLog::trim() {
  while (limit_ > 0 && events_.size() > limit_) {
    events_.pop_front();
    ++dropped_;
  }
}

void CaptureLog::set_event_limit(size_t limit) {
  limit_ = limit;
  trim();
}

void CaptureLog::add_coalesced(Event e) {
  // A lift analysis notes its outcome during a run of hits of its entry: the run still counts as one.
  auto it = events_.rbegin();
  while (it != events_.rend() && (it->kind == EventKind::Lift || it->kind == EventKind::LiftRefused)) ++it;
  if (it != events_.rend()) {
    Event& last = *it;
    if (last.kind == e.kind && last.fn == e.fn && last.entry == e.entry && last.details == e.details) {
      last.count++;
      if (listener_) listener_(last, listener_ctx_);  // --events writes every hit, with its count
      return;
    }
  }
  add(std::move(e));
}

void CaptureLog::remove_graph(const std::string& id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  GraphRecord* p = it->second;
  by_id_.erase(it);
  graphs_.erase(std::remove_if(graphs_.begin(), graphs_.end(), [&](const auto& r) { return r.get() == p; }),
                graphs_.end());
}

// Without this, each function compiled anew in a loop left its graphs (about 9 KB for 21 ops) for
// the life of the process.
void CaptureLog::trim_dead_graphs() {
  if (limit_ == 0) return;
  size_t dead = 0;
  for (const auto& r : graphs_) dead += r->owner.expired();
  if (dead <= kDeadFunctionGraphs) return;
  size_t drop = dead - kDeadFunctionGraphs;
  auto keep = std::remove_if(graphs_.begin(), graphs_.end(), [&](const std::unique_ptr<GraphRecord>& r) {
    if (drop == 0 || !r->owner.expired()) return false;
    --drop;
    by_id_.erase(r->id());
    return true;
  });
  graphs_.erase(keep, graphs_.end());
}

GraphRecord& CaptureLog::graph(const std::string& fn, int entry, int segment, std::shared_ptr<const Graph> g,
                               std::weak_ptr<const CompiledFunction> owner) {
  std::string id = fn + "[" + std::to_string(entry) + "]." + std::to_string(segment);
  auto it = by_id_.find(id);
  if (it != by_id_.end()) {
    // The callers set the plan and the rest from the same segment: the graph must be that
    // segment's too, should two functions ever answer to one name.
    it->second->graph = std::move(g);
    it->second->owner = std::move(owner);
    return *it->second;
  }
  auto r = std::make_unique<GraphRecord>();
  r->fn = fn;
  r->entry = entry;
  r->segment = segment;
  r->graph = std::move(g);
  r->owner = std::move(owner);
  trim_dead_graphs();
  GraphRecord* p = r.get();
  graphs_.push_back(std::move(r));
  by_id_[id] = p;
  return *p;
}

GraphRecord* CaptureLog::find_graph(const std::string& id) {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

void CaptureLog::reset() {
  events_.clear();
  dropped_ = 0;
  counters_ = Counters{};
  graphs_.clear();
  by_id_.clear();
  foreign_graphs_.clear();
  foreign_entries_.clear();
}

}  // namespace dyn
