// Text the user typed: whether it is UTF-8, and how a message shows it (invisible characters
// escaped, long text cut).
#pragma once
#include <string>
#include <string_view>

namespace dyn::repl {

// Where `s` stops being well-formed UTF-8 (as Python's decoder wants it: no overlong forms, no
// surrogates, nothing past U+10FFFF), or npos.
size_t invalid_utf8_at(std::string_view s);

// How many characters of a path a message shows: more than of a word, the end of a path matters.
constexpr size_t kPathChars = 200;

// `s` as an error message echoes it: characters that print as nothing, look like a blank or move
// the cursor (controls, zero-width and other format characters, spaces other than ' ', bytes that
// are not UTF-8) escaped as Python's repr does (\x01, \u200b), and only its first `max_chars`
// characters, then "...".
std::string shown(std::string_view s, size_t max_chars = 60);

// The same escapes over a whole message built elsewhere (the engine's errors echo ids), its
// newlines kept.
std::string printable(std::string_view message);

// The characters of UTF-8 text; a byte that is not UTF-8 stands for itself.
std::u32string code_points(std::string_view s);

}  // namespace dyn::repl
