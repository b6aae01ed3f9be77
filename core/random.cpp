// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
#include "core/random.h"

#include <immintrin.h>

#include <mutex>

namespace dyn {

std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = static_cast<uint32_t>(p1);
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

namespace {
// The high and low halves of a * m for each 32-bit lane (m: one multiplier in every lane).
inline void mul_hi_lo(__m256i a, __m256i m, __m256i* hi, __m256i* lo) {
  __m256i even = _mm256_mul_epu32(a, m);                        // lanes 0, 2, 4, 6 as 64 bits
  __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);  // lanes 1, 3, 5, 7
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}
}  // namespace

void philox4x32_words(uint64_t key, uint64_t counter, int64_t n, uint32_t* w) {
  int64_t j = 0;
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (; j + 8 <= n; j += 8) {
    alignas(32) uint32_t lo[8], hi[8];
    for (int l = 0; l < 8; ++l) {
      uint64_t c = counter + static_cast<uint64_t>(j + l);
      lo[l] = static_cast<uint32_t>(c), hi[l] = static_cast<uint32_t>(c >> 32);
    }
    __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo));
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi));
    __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
    uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
    for (int r = 0; r < 10; ++r) {
      __m256i h0, l0, h1, l1;
      mul_hi_lo(c0, m0, &h0, &l0);
      mul_hi_lo(c2, m1, &h1, &l1);
      __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(h1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
      __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(h0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
      c0 = n0, c1 = l1, c2 = n2, c3 = l0;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    // Counter-major order: a 4 x 8 transpose of the four word vectors.
    __m256i a = _mm256_unpacklo_epi32(c0, c1), b = _mm256_unpackhi_epi32(c0, c1);
    __m256i c = _mm256_unpacklo_epi32(c2, c3), d = _mm256_unpackhi_epi32(c2, c3);
    __m256i r0 = _mm256_unpacklo_epi64(a, c), r1 = _mm256_unpackhi_epi64(a, c);  // counters 0 and 4, 1 and 5
    __m256i r2 = _mm256_unpacklo_epi64(b, d), r3 = _mm256_unpackhi_epi64(b, d);  // counters 2 and 6, 3 and 7
    auto* out = reinterpret_cast<__m256i*>(w + 4 * j);
    _mm256_storeu_si256(out + 0, _mm256_permute2x128_si256(r0, r1, 0x20));  // counters 0, 1
    _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(r2, r3, 0x20));  // counters 2, 3
    _mm256_storeu_si256(out + 2, _mm256_permute2x128_si256(r0, r1, 0x31));  // counters 4, 5
    _mm256_storeu_si256(out + 3, _mm256_permute2x128_si256(r2, r3, 0x31));  // counters 6, 7
  }
  for (; j < n; ++j) {
    std::array<uint32_t, 4> r = philox4x32(key, counter + static_cast<uint64_t>(j));
    for (int k = 0; k < 4; ++k) w[4 * j + k] = r[static_cast<size_t>(k)];
  }
}

namespace {
std::mutex g_mu;
GeneratorState g_state{67280421310721ull, 0};
}  // namespace

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_state = {seed, 0};
}

uint64_t initial_seed() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_state.seed;
}

GeneratorState rng_state() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_state;
}

void set_rng_state(GeneratorState s) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_state = s;
}

GeneratorState reserve_random(uint64_t nblocks) {
  std::lock_guard<std::mutex> lk(g_mu);
  GeneratorState s = g_state;
  g_state.offset += nblocks;
  return s;
}

uint64_t random_blocks(int kind, DType dtype, int64_t n) {
  auto un = static_cast<uint64_t>(n);
  if (kind == 0) return dtype == DType::Float64 ? (un + 1) / 2 : (un + 3) / 4;
  if (kind == 1) return dtype == DType::Float64 ? un : (un + 1) / 2;
  return (un + 1) / 2;
}

}  // namespace dyn
