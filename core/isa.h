// Which instruction set this process computes on, chosen once: the vector math, the row kernels
// and the float products all take the same one, so that a run gives the same bits on every path.
#pragma once

namespace dyn {

// True where the CPU has AVX-512F and DYN_VMATH is not "avx2" (which keeps AVX2 on an AVX-512
// machine, to reproduce another machine's bits).
bool use_avx512();

}  // namespace dyn
