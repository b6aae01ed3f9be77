// Dynamic shapes: a size that varies between calls is a symbol (s0, s1, ...) of its cache entry,
// and every int of a graph that follows it (a value's size, a view's target size, a slice's
// bound) is a form in those symbols. See Note [dynamic shapes] in symbolic.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/registry.h"

namespace dyn {

// coef * s[a] (* s[b]) + add; a < 0: the constant `add`.
struct SymExpr {
  int64_t coef = 1, add = 0;
  int8_t a = -1, b = -1;
  static SymExpr constant(int64_t v) { return SymExpr{1, v, -1, -1}; }
  bool symbolic() const { return a >= 0; }
  bool operator==(const SymExpr&) const = default;
  std::string str() const;  // "s0", "16*s0", "s0*s1", "s0 + 1", "7"
};

// An int of a node's attributes that follows the symbols: slot < kMaxDims is dims[slot], then
// dim, i0, i1, i2, and the int-valued scalar, scalar2, scalar3.
struct SymAttr {
  int8_t slot = 0;
  SymExpr e;
  bool operator==(const SymAttr&) const = default;
};
constexpr int kIntSlots = kMaxDims + 4 + 3;
// The int in slot s of a, or false when a has none there (a shorter dims, a float scalar).
bool int_slot(const Attrs& a, int s, int64_t* out);
void set_int_slot(Attrs* a, int s, int64_t v);
// "size 1 of view", "the stop of slice": slot s of op's attributes in words.
std::string int_slot_name(OpId op, int s);

// "size[1]=s0, stop=s0 - 1": a node's size arguments that follow the symbols, for printing.
std::string sym_attrs_str(OpId op, const std::vector<SymAttr>& attrs);

// One symbol of a cache entry: where it was first seen and its sizes in the traces it came from.
struct SymInfo {
  std::string source;   // "x.size(0)", "dim 1 of %3"
  int64_t traced = 0;   // in the trace that made it dynamic
  int64_t sample = -1;  // in the earlier trace it was compared with; -1: marked dynamic, no other
};

// Symbols an entry may have: past these, sizes stay specialized (a symbol's index is an int8_t).
constexpr size_t kMaxSymbols = 64;

// The values of one call's symbols; -1 while not yet bound.
using SymValues = std::vector<int64_t>;
// e under v; false when a symbol of e is unbound.
bool sym_eval(const SymExpr& e, const SymValues& v, int64_t* out);
// Whether x fits e under v. When e has one unbound symbol and x determines it as a size of at
// least 2, it is bound (sizes 0 and 1 stay specialized, as in PyTorch).
bool sym_match(const SymExpr& e, int64_t x, SymValues* v);
// "s0 (= 8)", "16*s0 (= 128)", or "s0 (a size >= 2)" when unbound: what a failed check expected.
std::string sym_expected(const SymExpr& e, const SymValues& v);

}  // namespace dyn
