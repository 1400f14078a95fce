#include "runtime/config/deepspeed_keys.h"

namespace zt::deepspeed_keys {

const std::map<std::string, std::string>& direct() {
  static const std::map<std::string, std::string> table = {
      {"steps_per_print", "logging.log_interval"},
      {"gradient_clipping", "train.gradient_clipping"},
      {"zero_optimization.stage", "zero_optimization.stage"},
      {"zero_optimization.overlap_comm", "zero_optimization.overlap_comm"},
      {"zero_optimization.reduce_bucket_size", "zero_optimization.reduce_bucket_size"},
      {"zero_optimization.stage3_prefetch_bucket_size", "zero_optimization.stage3_prefetch_bucket_size"},
      {"zero_optimization.stage3_param_persistence_threshold", "zero_optimization.stage3_param_persistence_threshold"},
      {"zero_optimization.zero_hpz_partition_size", "zero_optimization.zero_hpz_partition_size"},
      {"communication_data_type", "zero_optimization.communication_data_type"},
      {"optimizer.params.lr", "optimizer.lr"},
      {"optimizer.params.betas", "optimizer.betas"},
      {"optimizer.params.eps", "optimizer.eps"},
      {"optimizer.params.weight_decay", "optimizer.weight_decay"},
      {"fp16.loss_scale", "precision.loss_scale"},
      {"fp16.initial_scale_power", "precision.initial_scale_power"},
      {"fp16.loss_scale_window", "precision.loss_scale_window"},
      {"fp16.hysteresis", "precision.hysteresis"},
      {"fp16.min_loss_scale", "precision.min_loss_scale"},
  };
  return table;
}

const std::map<std::string, std::string>& no_op() {
  static const std::string stage3_live = "stage 3 frees each layer's gathered parameters after its use unless a "
                                         "read within zero_optimization.stage3_prefetch_bucket_size follows (a "
                                         "tied embedding: after the LM head's), and gathers ahead only that many";
  static const std::string stage3_save = "`zerotrain export` writes the consolidated fp32 weights";
  static const std::map<std::string, std::string> table = {
      {"zero_optimization.reduce_scatter", "gradients are always reduce-scattered at stages 1-3"},
      {"zero_optimization.allgather_bucket_size",
       "stages 1/2 all-gather each layer's updated parameters into the layer, one collective per layer"},
      {"zero_optimization.contiguous_gradients", "gradients are always packed into contiguous buckets"},
      {"zero_optimization.allgather_partitions", "updated parameters are always all-gathered"},
      {"zero_optimization.round_robin_gradients", "each rank reduces its own contiguous shard"},
      {"zero_optimization.load_from_fp32_weights", "checkpoints always hold fp32 master weights"},
      {"zero_optimization.elastic_checkpoint", "checkpoints load at any world size and ZeRO stage"},
      {"zero_optimization.stage3_gather_16bit_weights_on_model_save", stage3_save},
      {"zero_optimization.gather_16bit_weights_on_model_save", stage3_save},
      {"zero_optimization.stage3_gather_fp16_weights_on_model_save", stage3_save},
      {"zero_optimization.stage3_max_live_parameters", stage3_live},
      {"zero_optimization.stage3_max_reuse_distance", stage3_live},
      {"zero_optimization.stage3_model_persistence_threshold",
       "small parameters stay resident by zero_optimization.stage3_param_persistence_threshold alone"},
      {"zero_optimization.stage3_module_granularity_threshold", "parameters are gathered a layer at a time"},
      {"zero_optimization.stage3_allgather_sequential", "each layer's parameters are gathered in one collective"},
      {"zero_optimization.stage3_use_all_reduce_for_fetch_params", "parameters are gathered with all-gather"},
      {"zero_optimization.sub_group_size", "the optimizer updates a rank's whole shard in one fused pass"},
      {"zero_optimization.memory_efficient_linear", "a linear layer's backward keeps only what it needs"},
      {"zero_optimization.ignore_unused_parameters", "every parameter is used"},
      {"zero_optimization.legacy_stage1", "one implementation of each stage"},
      {"zero_optimization.use_multi_rank_bucket_allreduce", "buckets are reduced one collective each"},
      {"zero_optimization.parameter_alignment", "shards are aligned by zerotrain's own layout"},
      {"zero_optimization.enable_sanity_checks", "zerotrain checks its layout at start-up"},
      {"zero_optimization.log_trace_cache_warnings", "no module trace to cache"},
      {"zero_optimization.override_module_apply", "no torch modules to patch"},
      {"zero_optimization.pipeline_loading_checkpoint", "no pipeline parallelism"},
      {"zero_optimization.compute_grad_norm", "the gradient norm is computed every step (metrics.jsonl)"},
      {"wall_clock_breakdown", "step, compute and communication times are in <run_dir>/metrics.jsonl"},
      {"memory_breakdown", "memory per category is in <run_dir>/metrics.jsonl"},
      {"zero_allow_untested_optimizer", "zerotrain has its own AdamW"},
      {"zero_force_ds_cpu_optimizer", "zerotrain has its own AdamW"},
      {"fp16.auto_cast", "zerotrain casts inputs to precision.dtype itself"},
      {"fp16.consecutive_hysteresis", "false is zerotrain's behaviour: the hysteresis refills when the scale grows"},
      {"bf16.immediate_grad_update", "gradients are applied at the accumulation boundary"},
      {"bf16.check_grad_overflow", "non-finite gradients are detected every step (train.on_nonfinite)"},
      {"optimizer.params.torch_adam", "zerotrain has its own fused AdamW"},
      {"optimizer.params.adam_w_mode", "zerotrain's AdamW decouples weight decay"},
      {"optimizer.params.bias_correction", "zerotrain's AdamW corrects both moments' bias"},
      {"optimizer.params.amsgrad", "zerotrain's AdamW is not AMSGrad"},
      {"optimizer.params.foreach", "zerotrain's AdamW is one fused pass"},
      {"optimizer.params.fp32_optimizer_states", "the optimizer state is fp32"},
      {"prescale_gradients", "gradients are averaged once, in the reduction"},
      {"gradient_predivide_factor", "gradients are averaged once, in the reduction"},
      {"disable_allgather", "updated parameters are always all-gathered"},
      {"sparse_gradients", "zerotrain's gradients are dense"},
      {"dump_state", "the config is written to <run_dir>/config.yaml"},
      {"dataloader_drop_last", "a partial batch is always left out"},
      {"cuda_visible_devices", "each rank takes its GPU from train.device and the launcher's CUDA_VISIBLE_DEVICES"},
      {"seq_parallel_communication_data_type", "no sequence parallelism"},
      {"aio", "it tunes NVMe offload, which zerotrain does not do"},
      {"compile", "zerotrain's kernels are compiled ahead of time"},
      {"checkpoint", "checkpoints are written by zerotrain's own protocol (docs/checkpoints.md)"},
      {"data_types", "gradients take precision.dtype, their sums across ranks "
                     "zero_optimization.communication_data_type"},
      {"log_level", "zerotrain's log is its own"},
  };
  return table;
}

const std::map<std::string, std::string>& unsupported() {
  static const std::string offload =
      "optimizer state stays on the device; shard it over more ranks with zero_optimization.stage: 1-3";
  static const std::string quantized =
      "no quantized communication (ZeRO++); zero_optimization.communication_data_type: bf16 halves traffic";
  static const std::string metrics = "metrics go to <run_dir>/metrics.jsonl; `zerotrain plot` draws them";
  static const std::map<std::string, std::string> table = {
      {"zero_optimization.offload_optimizer", offload},
      {"zero_optimization.cpu_offload", offload},
      {"zero_optimization.offload_param", "parameters stay on the device; shard them with zero_optimization.stage: 3"},
      {"zero_optimization.cpu_offload_params",
       "parameters stay on the device; shard them with zero_optimization.stage: 3"},
      {"zero_optimization.cpu_offload_use_pin_memory", offload},
      {"zero_optimization.zenflow", offload},
      {"zero_optimization.zero_quantized_weights", quantized},
      {"zero_optimization.zero_quantized_gradients", quantized},
      {"zero_optimization.zero_quantized_nontrainable_weights", quantized},
      {"zero_optimization.mics_shard_size", "no MiCS; use zero_optimization.stage: 3"},
      {"fp16.fp16_master_weights_and_grads", "the optimizer keeps fp32 master weights"},
      {"bf16.bf16_master_weights_and_grads", "the optimizer keeps fp32 master weights"},
      {"bf16.bf16_optimizer_states", "the optimizer state is fp32"},
      {"amp", "no NVIDIA Apex AMP; use the bf16 or fp16 section"},
      {"torch_autocast", "no autocast; the bf16 and fp16 sections compute in 16 bits with fp32 master weights"},
      {"flops_profiler", "`zerotrain plan` reports FLOPs and predicted step times; metrics.jsonl has measured ones"},
      {"tensorboard", metrics},
      {"wandb", metrics},
      {"csv_monitor", "metrics go to <run_dir>/metrics.jsonl (JSON lines)"},
      {"comet", metrics},
      {"comms_logger", "`zerotrain train --trace STEPS` records every collective in a timeline"},
      {"hybrid_engine", "no hybrid engine (generation with inference kernels between training steps)"},
      {"pipeline", "no pipeline parallelism; zerotrain is data-parallel"},
      {"tensor_parallel", "no tensor parallelism; zerotrain is data-parallel"},
      {"sequence_parallel_size", "no sequence parallelism; zerotrain is data-parallel"},
      {"elasticity", "no elastic training; a checkpoint resumes at any world size with --resume"},
      {"compression_training", "no compression training"},
      {"quantize_training", "no quantization-aware training"},
      {"data_efficiency", "no curriculum or data routing"},
      {"curriculum_learning", "no curriculum learning"},
      {"progressive_layer_drop", "no progressive layer drop"},
      {"eigenvalue", "no eigenvalue computation"},
      {"sparse_attention", "no sparse attention"},
      {"autotuning", "`zerotrain plan` predicts step times for candidate settings"},
      {"nebula", "checkpoints are written by zerotrain's own protocol; checkpoint.async_save writes them in the "
                 "background"},
  };
  return table;
}

const std::map<std::string, std::string>& other_optimizers() {
  static const std::map<std::string, std::string> table = {
      {"onebitadam", "1-bit Adam (compressed communication)"},
      {"onebitlamb", "1-bit LAMB (compressed communication)"},
      {"zerooneadam", "0/1 Adam (compressed communication)"},
      {"lamb", "LAMB (layer-wise adaptive rates)"},
      {"adagrad", "Adagrad"},
      {"lion", "Lion"},
      {"muadam", "MuAdam (muP)"},
      {"muadamw", "MuAdamW (muP)"},
      {"musgd", "MuSGD (muP)"},
      {"muon", "Muon"},
      {"sgd", "SGD"},
  };
  return table;
}

}  // namespace zt::deepspeed_keys
