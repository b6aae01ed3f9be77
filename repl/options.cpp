// The dynrepl command line, parsed with Boost.Program_options.
#include "repl/options.h"

#include "repl/write_file.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <sstream>
#include <stdexcept>

namespace po = boost::program_options;

namespace dyn::repl {

namespace {

po::options_description describe() {
  po::options_description d("options");
  d.add_options()("exec,e", po::value<std::vector<std::string>>()->composing(),
                  "run one line (Python) after the script; repeatable")(
      "interactive,i", "open the REPL after the script even when stdin is not a TTY")(
      "batch", "never open the REPL; exit after the script and the -e lines")("no-color", "plain output")(
      "real-torch",
      "`import torch` loads PyTorch 2.15 (scripts/setup.sh --with-torch, or DYNREPL_TORCH=VENV) instead of dyn, and "
      "the views show its torch.compile's graphs, breaks, guards and recompiles")(
      "events", po::value<std::string>(), "write every capture event to FILE, one JSON object per line")(
      "event-limit", po::value<std::string>(),
      "keep the newest N events in the history :events shows (default 10000; 0 keeps every one)")(
      "dot-dir", po::value<std::string>(), "write every compiled graph as DIR/<graph id>.dot")(
      "report", po::value<std::string>(), "write a self-contained HTML report to FILE at exit")(
      "pm", "post-mortem: on an uncaught exception, open the REPL in the frame that raised it")(
      "break", po::value<std::vector<std::string>>()->composing(),
      "stop the script at the next event KIND[:FN] (graph-break, recompile, guard-failure, compile, fallback)")(
      "help,h", "show this help")("version", "show the version");
  return d;
}

// Options that take a value as the next argument: these must not end the option prefix early.
bool takes_value(const std::string& a) {
  return a == "-e" || a == "--exec" || a == "--events" || a == "--event-limit" || a == "--dot-dir" || a == "--report" ||
         a == "--break";
}

}  // namespace

std::string usage_text() {
  std::ostringstream s;
  s << "usage: dynrepl [options] [script.py [args...]]\n"
       "       dynrepl [options] -c CODE [args...]\n"
       "       dynrepl [options]                 (interactive)\n\n"
    << describe();
  return s.str();
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::vector<std::string> prefix;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-c") {
      if (i + 1 >= argc) throw std::invalid_argument("option -c requires an argument (the code to run)");
      o.code = argv[++i];
      ++i;
      break;
    }
    if (a == "--") {
      ++i;
      if (i < argc) o.script = argv[i++];
      break;
    }
    if (a.empty() || a[0] != '-' || a == "-") {
      o.script = a;
      ++i;
      break;
    }
    prefix.push_back(a);
    if (takes_value(a) && i + 1 < argc) prefix.push_back(argv[++i]);
  }
  for (; i < argc; ++i) o.args.push_back(argv[i]);

  po::variables_map vm;
  auto parse = [&](const std::vector<std::string>& words) {
    std::vector<const char*> pv = {"dynrepl"};
    for (const auto& p : words) pv.push_back(p.c_str());
    po::store(
        po::command_line_parser(static_cast<int>(pv.size()), const_cast<char**>(pv.data())).options(describe()).run(),
        vm);
    po::notify(vm);
  };
  try {
    parse(prefix);
  } catch (const po::error&) {
    // Boost fills its messages' %placeholders% until none is left, so an argument that contains
    // one ('--x%canonical_option%') made what() loop forever (found by tests/fuzz/libfuzzer). The
    // message is taken from a second parse with every '%' replaced by a byte no argument has, then
    // put back.
    std::string all;
    for (const std::string& w : prefix) all += w;
    char kPercent = 0;
    for (int b = 1; b < 256 && !kPercent; ++b)
      if (b != '%' && all.find(static_cast<char>(b)) == std::string::npos) kPercent = static_cast<char>(b);
    if (!kPercent)
      throw std::invalid_argument("the options before the script could not be read; dynrepl --help lists them");
    std::vector<std::string> safe = prefix;
    for (std::string& w : safe) std::replace(w.begin(), w.end(), '%', kPercent);
    vm.clear();
    try {
      parse(safe);
    } catch (const po::error& e) {
      std::string m = e.what();
      std::replace(m.begin(), m.end(), kPercent, '%');
      throw std::invalid_argument(m);
    }
    throw std::invalid_argument("the options before the script could not be read; dynrepl --help lists them");
  }
  if (vm.count("exec")) o.exec = vm["exec"].as<std::vector<std::string>>();
  if (vm.count("events")) o.events = vm["events"].as<std::string>();
  if (vm.count("dot-dir")) o.dot_dir = vm["dot-dir"].as<std::string>();
  if (vm.count("event-limit")) {
    const std::string& s = vm["event-limit"].as<std::string>();
    size_t used = 0;
    long long n = -1;
    try {
      n = std::stoll(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != s.size() || s.empty() || n < 0 || s[0] == '+' || s[0] == ' ')
      throw std::invalid_argument(
          "option --event-limit takes a whole number of events, 0 or more (0 keeps every "
          "event), got '" +
          s + "'");
    o.event_limit = static_cast<size_t>(n);
  }
  if (vm.count("report")) o.report = vm["report"].as<std::string>();
  // Checked now, not when the file is written at exit: `--report script.py` would replace the
  // script the user meant to run.
  for (const std::optional<std::string>* out : {&o.report, &o.events})
    if (*out)
      if (std::string refused = refused_target(**out); !refused.empty())
        throw std::invalid_argument(refused + " before the script (dynrepl --report report.html script.py)");
  if (vm.count("break")) o.breaks = vm["break"].as<std::vector<std::string>>();
  o.interactive = vm.count("interactive") > 0;
  o.batch = vm.count("batch") > 0;
  o.post_mortem = vm.count("pm") > 0;
  o.no_color = vm.count("no-color") > 0;
  o.real_torch = vm.count("real-torch") > 0;
  o.help = vm.count("help") > 0;
  o.version = vm.count("version") > 0;
  if (o.interactive && o.batch) throw std::invalid_argument("options -i and --batch contradict each other");
  if (o.post_mortem && o.batch) throw std::invalid_argument("options --pm and --batch contradict each other");
  return o;
}

}  // namespace dyn::repl
