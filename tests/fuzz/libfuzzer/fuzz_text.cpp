// libFuzzer target: the REPL's text checks (repl/text.cpp), which every line a user types and
// every error that echoes it go through. Checked against a UTF-8 validator written the other way
// round (the Unicode standard's table of well-formed byte sequences, Table 3-7), and for the
// promises the messages make: their output is UTF-8 and prints no invisible or control byte.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "repl/text.h"

namespace {

[[noreturn]] void broken(const char* what, std::string_view in) {
  std::fprintf(stderr, "fuzz_text: %s (input of %zu bytes)\n", what, in.size());
  std::abort();
}

// Table 3-7: the first byte decides the ranges the next ones must fall in.
size_t reference_invalid_at(std::string_view s) {
  size_t i = 0;
  auto in = [&](size_t k, unsigned lo, unsigned hi) {
    if (i + k >= s.size()) return false;
    unsigned b = static_cast<unsigned char>(s[i + k]);
    return b >= lo && b <= hi;
  };
  while (i < s.size()) {
    unsigned b = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    if (b <= 0x7f)
      n = 1;
    else if (b >= 0xc2 && b <= 0xdf)
      n = in(1, 0x80, 0xbf) ? 2 : 0;
    else if (b == 0xe0)
      n = in(1, 0xa0, 0xbf) && in(2, 0x80, 0xbf) ? 3 : 0;
    else if ((b >= 0xe1 && b <= 0xec) || b == 0xee || b == 0xef)
      n = in(1, 0x80, 0xbf) && in(2, 0x80, 0xbf) ? 3 : 0;
    else if (b == 0xed)
      n = in(1, 0x80, 0x9f) && in(2, 0x80, 0xbf) ? 3 : 0;
    else if (b == 0xf0)
      n = in(1, 0x90, 0xbf) && in(2, 0x80, 0xbf) && in(3, 0x80, 0xbf) ? 4 : 0;
    else if (b >= 0xf1 && b <= 0xf3)
      n = in(1, 0x80, 0xbf) && in(2, 0x80, 0xbf) && in(3, 0x80, 0xbf) ? 4 : 0;
    else if (b == 0xf4)
      n = in(1, 0x80, 0x8f) && in(2, 0x80, 0xbf) && in(3, 0x80, 0xbf) ? 4 : 0;
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

// No byte that moves the cursor or prints as nothing: C0 controls, DEL, and (as UTF-8) C1 controls.
bool has_control(std::string_view s, bool newline_ok) {
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned b = static_cast<unsigned char>(s[i]);
    if ((b < 0x20 && !(newline_ok && b == '\n')) || b == 0x7f) return true;
    if (b == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return true;
  }
  return false;
}

std::string encode(const std::u32string& cps) {
  std::string out;
  for (char32_t c : cps) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xc0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xe0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (c & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  using namespace dyn::repl;
  if (invalid_utf8_at(s) != reference_invalid_at(s)) broken("invalid_utf8_at disagrees with Table 3-7", s);

  std::string one = shown(s), all = shown(s, s.size() + 1), msg = printable(s);
  for (const std::string* out : {&one, &all, &msg}) {
    if (invalid_utf8_at(*out) != std::string_view::npos) broken("an echo of the input is not UTF-8", s);
    if (has_control(*out, out == &msg)) broken("an echo of the input has a control byte", s);
  }
  if (one.size() > 4 * 60 + 10 * 60 + 3) broken("shown() did not cut a long input", s);
  size_t newlines = 0, kept = 0;
  for (char c : s) newlines += c == '\n';
  for (char c : msg) kept += c == '\n';
  if (kept != newlines) broken("printable() lost or added a newline", s);

  // Text of plain printable ASCII is shown as it is.
  bool plain = true;
  for (char c : s) plain &= c >= 0x20 && c < 0x7f;
  if (plain && all != s) broken("shown() changed plain text", s);

  // Well-formed text decodes to code points that encode back to the same bytes.
  std::u32string cps = code_points(s);
  if (cps.size() > s.size()) broken("code_points() made more characters than bytes", s);
  if (reference_invalid_at(s) == std::string_view::npos && encode(cps) != s)
    broken("code_points() of well-formed UTF-8 does not encode back", s);
  return 0;
}
