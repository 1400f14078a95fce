// The elementwise fp32 loops the host runs over whole gradients every step: accumulating reduced
// gradients into the fp32 shard, summing 16-bit buckets in the MPI ring, averaging. Built to
// vectorize (vector_clones.h). Each element's result is the one IEEE operation a plain scalar loop
// does (no reassociation: nothing is a reduction), so results are bitwise those of that loop on
// every x86-64 CPU, whichever clone runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace zt {

// acc[i] += x[i]
void add_into(float* acc, const float* x, std::size_t n);

// acc[i] += x[i] widened to fp32 (x in f32, bf16 or f16; throws std::invalid_argument for i32).
void accumulate_into(float* acc, const void* x, DType x_dtype, std::size_t n);

// acc[i] = round(acc[i] + x[i]) for 16-bit values (bf16 or f16; throws std::invalid_argument for
// others): both widened to fp32, added, rounded once to the type (to nearest, ties to even).
void add_rounded_16bit(std::uint16_t* acc, const std::uint16_t* x, DType dtype, std::size_t n);

// x[i] /= divisor (a division, not a multiplication by the inverse: that would round differently).
void divide_by(float* x, float divisor, std::size_t n);

}  // namespace zt
