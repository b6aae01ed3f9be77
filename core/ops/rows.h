// The float32 row kernels of softmax, log_softmax and layer_norm at AVX-512 width (rows_avx512.cpp,
// built with -mavx512f), called by reduce.cpp where vmath::avx512() holds; elsewhere reduce.cpp's
// AVX2 loops run. Note [rows at two widths]: each function gives the bits of its AVX2 twin in
// reduce.cpp for every input. Maxima are exact in any order; exp is vmath_float.h's, the same
// bits at both widths; and every sum keeps the AVX2 lanes and their order: an element goes to the
// lane of its index modulo the AVX2 lane count, each lane adds its elements in index order, and
// the lanes combine in the same fixed tree. Only the number of elements an instruction handles
// differs, so a process on AVX-512 and one on AVX2 give the same results.
#pragma once
#include <cstdint>

namespace dyn::rows {

// The largest element of row[0..r), NaN if any is NaN. copy (when not null): row[0..r) is also
// stored there, for the next passes to read an aligned row (a row of a numpy array is 16 bytes off
// a cache line: every 64-byte load then spans two lines).
float max_avx512(const float* row, int64_t r, float* copy);

// exp(row[k] - shift) into e (when e is not null) and their sum in double, in the order of
// reduce.cpp's exp_shifted_sum. next: a row to prefetch while this one is computed.
double exp_shifted_sum_avx512(const float* row, int64_t r, float shift, float* e, const float* next);

// out[k] = e[k] * inv; streaming stores when stream (out 64-byte aligned is not required).
void scale_avx512(const float* e, int64_t r, float inv, float* out, bool stream);

// The sum of row[0..r) (Square: of (row[k] - center)^2) in double, in the order of reduce.cpp's
// lane_sum_impl (32 lanes).
double lane_sum_avx512(const float* row, int64_t r, float* copy);
double lane_square_sum_avx512(const float* row, int64_t r, double center, const float* next);

// out[k] = ((row[k] - m) * rstd) * w[k] + b[k], w and b optional; streaming stores when stream.
void layer_norm_out_avx512(const float* row, int64_t r, float m, float rstd, const float* w, const float* b, float* out,
                           bool stream);

}  // namespace dyn::rows
