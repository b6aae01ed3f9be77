// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
#include "core/random.h"

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
