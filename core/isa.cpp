#include "core/isa.h"

#include <cstdlib>
#include <cstring>

namespace dyn {

bool use_avx512() {
  static const bool avx512 = [] {
    const char* want = std::getenv("DYN_VMATH");
    if (want && std::strcmp(want, "avx2") == 0) return false;
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return avx512;
}

}  // namespace dyn
