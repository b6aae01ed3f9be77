// The 16-bit floats: float16 (IEEE binary16) and bfloat16 (the top half of a float32). Storage
// only: no kernel computes in them. An op on them runs in float32 and rounds its result once, as
// PyTorch's CPU kernels do (the adapter in ops/registry.cpp), so these types only convert.
#pragma once
#include <bit>
#include <cstdint>

namespace dyn {

// Conversions in plain integer code, not F16C: the bindings include this header without the
// engine's -mf16c. They give F16C's bits for every float (tests/cpp: all 2^32 of them).
struct Half {
  uint16_t bits = 0;
  Half() = default;
  // Round to nearest even; a NaN keeps its sign and payload and becomes quiet, as F16C does.
  explicit Half(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    x &= 0x7FFFFFFFu;
    if (x >= 0x7F800000u) {  // inf, NaN
      bits = static_cast<uint16_t>(sign | 0x7C00u | (x > 0x7F800000u ? 0x200u | ((x >> 13) & 0x3FFu) : 0u));
    } else if (x >= 0x477FF000u) {  // 65520 and up round to inf
      bits = static_cast<uint16_t>(sign | 0x7C00u);
    } else if (x < 0x38800000u) {  // below 2^-14: a subnormal (or zero) in units of 2^-24
      // Adding 0.5 (whose ulp is 2^-24) makes the float unit round to nearest even for us.
      float g = std::bit_cast<float>(x) + 0.5f;
      bits = static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(g) - 0x3F000000u));
    } else {
      x += 0xC8000FFFu + ((x >> 13) & 1u);  // rebias the exponent (-112 << 23), round to even
      bits = static_cast<uint16_t>(sign | (x >> 13));
    }
  }
  operator float() const {  // exact, but for a signalling NaN
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exp = (bits >> 10) & 0x1Fu, mant = bits & 0x3FFu;
    if (exp == 0x1F)  // a NaN comes out quiet, as from F16C
      return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13) | (mant ? 0x400000u : 0u));
    if (exp == 0) {
      float m = static_cast<float>(mant) * 0x1p-24f;
      return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(m));
    }
    return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  // Round to nearest even; every NaN becomes 0x7FC0, as c10's round_to_nearest_even.
  explicit BFloat16(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if (f != f) {
      bits = 0x7FC0;
      return;
    }
    u += ((u >> 16) & 1u) + 0x7FFFu;
    bits = static_cast<uint16_t>(u >> 16);
  }
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }  // exact
};

template <typename T>
constexpr bool kReducedFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

}  // namespace dyn
