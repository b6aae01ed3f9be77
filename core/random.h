// Counter-based random numbers (Philox4x32-10): element i of a draw is a pure function of
// (seed, offset, i), so eager and compiled code draw the very same numbers.
#pragma once
#include <array>
#include <cstdint>

#include "core/dtype.h"

namespace dyn {

std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter);
// The words of n consecutive counters, w[4 * j + k] = philox4x32(key, counter + j)[k]: the same
// bits, eight counters at a time (a draw's kernels use this; one call per element was most of
// the time of a dropout mask).
void philox4x32_words(uint64_t key, uint64_t counter, int64_t n, uint32_t* w);

// The default generator's state (dyn.manual_seed).
struct GeneratorState {
  uint64_t seed;
  uint64_t offset;  // next unused Philox block
};
void manual_seed(uint64_t seed);
uint64_t initial_seed();
// The whole state, to run a draw on another generator's state (torch.Generator) and come back.
GeneratorState rng_state();
void set_rng_state(GeneratorState s);
// Reserves the blocks a draw of n elements consumes; returns (seed, first block).
GeneratorState reserve_random(uint64_t nblocks);
// Philox blocks one element of `dtype` from op rand/randn/randint consumes, times n, rounded up.
uint64_t random_blocks(int kind, DType dtype, int64_t n);  // kind: 0 rand, 1 randn, 2 randint

}  // namespace dyn
