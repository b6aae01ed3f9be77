// Elementwise formulas over blocks of contiguous elements: what the eager kernels run on each
// contiguous run and what a fused loop (core/ir/passes/fuse_elementwise.cpp) runs on its block
// buffers. Both paths call the same functions, so they give the same bits.
#pragma once
#include <cstdint>

#include "core/ops/registry.h"

namespace dyn::block {

// Elements per block: a few blocks of every fused operand stay in L1.
constexpr int64_t kBlock = 512;

// o[i] = formula(x[i]) for i < n, in dtype t; o may be x.
using UnaryFn = void (*)(const void* x, void* o, int64_t n);
// o[i] = formula(x[i], y[i]); o may be x or y.
using BinaryFn = void (*)(const void* x, const void* y, void* o, int64_t n);

// nullptr unless op's formula column is unary (binary) and t is float32 or float64 and the op
// maps floats to the same float type.
UnaryFn unary_fn(OpId op, DType t);
BinaryFn binary_fn(OpId op, DType t);

// Outputs of at least this many bytes are written with streaming (non-temporal) stores: far
// larger than the caches, their lines would otherwise be read from memory only to be overwritten
// (a fifth of an elementwise chain's traffic, a third of a row softmax's).
constexpr int64_t kStreamBytes = int64_t{16} << 20;

// dst[0..bytes) = src[0..bytes) by streaming stores; dst 32-byte aligned, bytes a multiple of 32.
// The caller fences (_mm_sfence) before another thread may read dst.
void stream_copy(const void* src, void* dst, int64_t bytes);

}  // namespace dyn::block
