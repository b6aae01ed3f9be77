// Text the user typed: UTF-8 checks and how messages show it.
#include "repl/text.h"

#include <fmt/format.h>

namespace dyn::repl {

namespace {

// One decoded character: its code point and how many bytes it took; a byte that does not start
// a well-formed sequence is {byte, 1, false}.
struct Decoded {
  char32_t c;
  size_t len;
  bool ok;
};

Decoded decode(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  unsigned c = b(0);
  if (c < 0x80) return {c, 1, true};
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0) return {c, 1, false};
  char32_t cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) >> 6) != 2) return {c, 1, false};
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  bool minimal = cp >= (n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u);
  if (!minimal || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return {c, 1, false};
  return {cp, n, true};
}

// Characters that show as nothing or as a blank, or act on the terminal: Unicode's controls
// (Cc), format characters (Cf) and separators (Zs, Zl, Zp) other than ' ', which Python's
// str.isprintable() refuses too, and the fillers and selectors that render empty.
bool invisible(char32_t c) {
  static constexpr char32_t kRanges[][2] = {
      {0x0000, 0x001f},   {0x007f, 0x00a0},   {0x00ad, 0x00ad},   {0x034f, 0x034f},   {0x0600, 0x0605},
      {0x061c, 0x061c},   {0x06dd, 0x06dd},   {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},
      {0x115f, 0x1160},   {0x1680, 0x1680},   {0x180b, 0x180f},   {0x2000, 0x200f},   {0x2028, 0x202f},
      {0x205f, 0x206f},   {0x3000, 0x3000},   {0x3164, 0x3164},   {0xfe00, 0xfe0f},   {0xfeff, 0xfeff},
      {0xffa0, 0xffa0},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd}, {0x13430, 0x1343f},
      {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001}, {0xe0020, 0xe007f}, {0xe0100, 0xe01ef},
  };
  for (const auto& r : kRanges)
    if (c >= r[0] && c <= r[1]) return true;
  return false;
}

// A character as Python's repr escapes it.
std::string escape_sequence(char32_t c) {
  if (c == '\t') return "\\t";
  if (c == '\n') return "\\n";
  if (c == '\r') return "\\r";
  if (c < 0x100) return fmt::format("\\x{:02x}", static_cast<unsigned>(c));
  if (c < 0x10000) return fmt::format("\\u{:04x}", static_cast<unsigned>(c));
  return fmt::format("\\U{:08x}", static_cast<unsigned>(c));
}

std::string escaped(std::string_view s, size_t max_chars, bool keep_newlines) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++chars) {
    if (chars == max_chars) return out + "...";
    Decoded d = decode(s, i);
    if (!d.ok)
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(d.c));  // the byte itself
    else if (invisible(d.c) && !(keep_newlines && d.c == '\n'))
      out += escape_sequence(d.c);
    else
      out.append(s.substr(i, d.len));
    i += d.len;
  }
  return out;
}

}  // namespace

size_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    Decoded d = decode(s, i);
    if (!d.ok) return i;
    i += d.len;
  }
  return std::string_view::npos;
}

std::string shown(std::string_view s, size_t max_chars) { return escaped(s, max_chars, false); }

std::string printable(std::string_view message) { return escaped(message, std::string_view::npos, true); }

std::u32string code_points(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    Decoded d = decode(s, i);
    out += d.c;
    i += d.len;
  }
  return out;
}

}  // namespace dyn::repl
