// What the ZeRO engine is asked to do: the stage, overlap, bucket sizes, precision and optimizer
// settings. The trainer maps the YAML config onto this struct, so zero/ does not read YAML.
#pragma once

#include <cstddef>
#include <cstdint>

#include "optim/adamw.h"
#include "optim/loss_scaler.h"
#include "runtime/core/dtype.h"

namespace zt {

struct ZeroOptions {
  int stage = 0;                                    // 0, 1, 2 or 3
  bool overlap_comm = true;
  std::size_t reduce_bucket_size = 500'000'000;     // elements per gradient bucket
  std::size_t stage3_prefetch_bucket_size = 50'000'000;         // elements gathered ahead of use
  std::size_t stage3_param_persistence_threshold = 100'000;     // blocks this small stay gathered
  DType compute_dtype = DType::f32;                 // parameters, activations, block gradients
  DType comm_dtype = DType::f32;                    // gradient buckets and their reduction
  int gradient_accumulation_steps = 1;
  AdamWHyper adamw;                                 // lr is replaced by the schedule every step
  bool decay_embeddings = true;                     // false: no weight decay on embeddings
  bool decay_bias_and_norm = false;                 // true: decay biases and LayerNorm gains too
  double gradient_clipping = 1.0;                   // max global norm; 0 = off
  bool loss_scaling = false;                        // fp16: dynamic (or static) loss scaling
  LossScalerOptions loss_scaler;
};

}  // namespace zt
