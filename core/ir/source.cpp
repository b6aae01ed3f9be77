// Source locations and a small cache of source files for printing lines beside nodes.
#include "core/ir/source.h"

#include <fstream>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace dyn {

namespace {
SourceLocator g_locator = nullptr;
}

std::string SourceLoc::str() const {
  if (!file) return "<unknown>";
  std::string f = *file;
  size_t slash = f.rfind('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return f + ":" + std::to_string(line);
}

const std::string* intern(const std::string& s) {
  static std::mutex* mu = new std::mutex;  // leaked, as the table: names outlive other statics
  static auto* table = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(*mu);
  return &*table->insert(s).first;
}

void set_source_locator(SourceLocator f) { g_locator = f; }

namespace {
struct FramesHash {
  size_t operator()(const std::vector<SourceLoc>& v) const {
    size_t h = v.size();
    for (const SourceLoc& f : v)
      h = h * 1000003u ^
          (std::hash<const void*>()(f.file) + 31 * std::hash<const void*>()(f.function) + static_cast<size_t>(f.line));
    return h;
  }
};
struct FramesEq {
  bool operator()(const std::vector<SourceLoc>& a, const std::vector<SourceLoc>& b) const {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].file != b[i].file || a[i].function != b[i].function || a[i].line != b[i].line) return false;
    return true;
  }
};
}  // namespace

SourceStack::SourceStack(const std::vector<SourceLoc>& frames) {
  if (frames.empty()) return;
  // Leaked on purpose: events and graphs held by other statics may still read them at exit.
  static std::mutex* mu = new std::mutex;
  static auto* table = new std::unordered_set<std::vector<SourceLoc>, FramesHash, FramesEq>();
  std::lock_guard<std::mutex> lock(*mu);
  auto it = table->find(frames);
  frames_ = it != table->end() ? &*it : &*table->insert(frames).first;
}

const std::vector<SourceLoc>& SourceStack::frames() const {
  static const std::vector<SourceLoc> none;
  return frames_ ? *frames_ : none;
}

SourceStack current_source() { return g_locator ? g_locator() : SourceStack{}; }

std::string source_line(const std::string& file, int line, bool strip) {
  static std::unordered_map<std::string, std::vector<std::string>> cache;
  auto it = cache.find(file);
  if (it == cache.end()) {
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    it = cache.emplace(file, std::move(lines)).first;
  }
  if (line < 1 || line > static_cast<int>(it->second.size())) return {};
  const std::string& l = it->second[line - 1];
  if (!strip) return l;
  size_t b = l.find_first_not_of(" \t");
  size_t e = l.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : l.substr(b, e - b + 1);
}

std::string SourceStack::str() const {
  SourceLoc t = top();
  if (!t.known()) return "<unknown>";
  std::string text = source_line(*t.file, t.line);
  return text.empty() ? t.str() : t.str() + " `" + text + "`";
}

}  // namespace dyn
