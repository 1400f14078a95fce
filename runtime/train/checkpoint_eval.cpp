#include "runtime/train/checkpoint_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "comm/make_communicator.h"
#include "comm/mpi_bootstrap.h"
#include "models/compute_context.h"
#include "models/family.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "core/error.h"
#include "runtime/train/batch_source.h"
#include "runtime/train/job_settings.h"
#include "zero/engine.h"

namespace zt {

EvalResult evaluate_checkpoint(const EvalOptions& options) {
  checkpoint::CheckpointReader reader(options.checkpoint);
  Config config = reader.config();
  if (!models::model_family(config.model.type).reads_tokens())
    throw UserError(fmt::format("zerotrain eval: checkpoint {} holds a {} model; eval scores token models (gpt2, llama)",
                                options.checkpoint.string(), choice_name(config.model.type)));
  EvalResult result;
  result.data = !options.data.empty() ? options.data : !config.data.val_files.empty() ? config.data.val_files
                                                                                      : config.data.train_files;
  if (options.batch_size > 0) config.train.train_micro_batch_size_per_gpu = options.batch_size;
  config.train.device = config.train.device.empty() ? "auto" : config.train.device;

  LaunchInfo launch = query_launch_info(MPI_COMM_WORLD);
  const Device device = resolve_device(config, launch.local_rank, launch.local_size);
  activate(device);
  CommOptions comm_options;
  static_cast<CommSettings&>(comm_options) = config.comm;
  auto comm = make_communicator(comm_options, device);
  auto model = build_model(config.model);
  reader.check_blocks_match(*model);
  auto ctx = device.is_cpu() ? models::ComputeContext::cpu(1, config.precision.dtype)
                             : models::ComputeContext::cuda(device.index, config.precision.dtype,
                                                           {.allow_tf32 = config.precision.tf32,
                                                            .cudnn_attention = config.train.cudnn_attention});
  const int B = static_cast<int>(config.train.train_micro_batch_size_per_gpu);
  const int T = static_cast<int>(effective_seq_len(config));
  ZeroOptions zero = zero_options(config);
  if (comm->world_size() == 1) zero.stage = 0;  // nothing to shard
  ZeroEngine engine(*model, *ctx, *comm, zero, B, T);
  engine.load_state(reader, reader.manifest().optimizer_steps, reader.manifest().loss_scaler);

  data::TokenLoaderOptions loader{result.data, B, T, comm->rank(), comm->world_size(), 0,
                                  static_cast<int>(config.model.vocab_size), data::WindowOrder::sequential};
  TokenBatches batches(loader);
  result.dataset_windows = batches.loader().windows_per_epoch();
  const auto available = static_cast<std::int64_t>(batches.loader().batches_per_epoch());
  result.batches = options.batches > 0 ? std::min(options.batches, available) : available;
  double sum = 0.0;
  for (std::int64_t i = 0; i < result.batches; ++i)
    sum += engine.eval_loss([&](models::Activations& acts, int) { batches.next(acts); });
  // Every batch scores the same number of tokens, so the mean of batch means is the token mean.
  result.loss = sum / static_cast<double>(result.batches);
  result.perplexity = std::exp(result.loss);
  result.tokens = static_cast<std::uint64_t>(result.batches) * comm->world_size() * B * T;
  return result;
}

}  // namespace zt
