// libFuzzer target: dynrepl's command line (repl/options.cpp). The input is split at NUL bytes
// into arguments. Whatever they are, parsing either gives options or throws invalid_argument with
// a message (dynrepl prints it and exits with status 2): no other exception, no crash, and what it
// accepts is consistent.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "repl/options.h"

namespace {
[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_options: %s\n", what);
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"dynrepl"};
  std::string cur;
  for (size_t i = 0; i < size && args.size() < 24; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (!cur.empty()) args.push_back(cur);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  dyn::repl::Options o;
  try {
    o = dyn::repl::parse_options(static_cast<int>(args.size()), argv.data());
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).empty()) broken("a usage error without a message");
    return 0;
  } catch (...) {
    broken("parse_options threw something other than invalid_argument");
  }
  if (o.interactive && o.batch) broken("accepted -i with --batch");
  if (o.post_mortem && o.batch) broken("accepted --pm with --batch");
  if (o.code && o.script) broken("both -c code and a script");
  return 0;
}
