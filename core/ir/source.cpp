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
  static std::unordered_set<std::string> table;
  return &*table.insert(s).first;
}

void set_source_locator(SourceLocator f) { g_locator = f; }

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
