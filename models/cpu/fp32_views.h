// The CPU code of every op computes in fp32. With 16-bit storage (bf16, f16) an op hands it fp32
// copies of its views: each widened exactly when the op starts, and each the op writes rounded
// back to the storage dtype once when it ends (store()). So every product and reduction
// accumulates in fp32 and a stored result is rounded once: the contract of the CUDA kernels, which
// load 16-bit values, compute in fp32 and round when they store. Views that are f32 already
// (fp32 storage, LayerNorm statistics, losses) pass through untouched, so an fp32 run computes
// exactly as before. A view given twice (an output that may alias an input) gets one copy, so the
// fp32 code sees the aliasing it allows.
#pragma once

#include <vector>

#include "core/buffer.h"

namespace zt::models::cpu {

class Fp32Views {
 public:
  Fp32Views() = default;
  ~Fp32Views();  // returns the copies' blocks for reuse (store() is what writes them back)
  Fp32Views(const Fp32Views&) = delete;
  Fp32Views& operator=(const Fp32Views&) = delete;

  // A view the op reads; null for an empty view.
  const float* in(const BufferView& view) { return values(view, false); }
  // A view the op writes, overwriting or accumulating into it (widened first either way: an op may
  // leave part of it alone, such as the padded columns of the LM head); null for an empty view.
  float* out(const BufferView& view) { return values(view, true); }
  // Rounds every written copy into its view. Call once, after the op.
  void store();

 private:
  struct Copy {
    BufferView view;
    std::vector<float> values;
    bool written = false;
  };
  float* values(const BufferView& view, bool written);
  std::vector<Copy> copies_;
};

}  // namespace zt::models::cpu
