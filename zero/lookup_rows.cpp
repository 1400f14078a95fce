#include "zero/lookup_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/dtype.h"

namespace zt {
namespace {

// The lookup block another block is tied to, if the model has one.
std::optional<std::size_t> tied_lookup_block(const models::Model& model) {
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    const auto tied = model.block(b).tied_block();
    if (tied && model.block(*tied).lookup_rows()) return *tied;
  }
  return std::nullopt;
}

std::size_t row_width(const models::Model& model, std::size_t block) {
  const std::optional<models::LookupRows> rows = model.block(block).lookup_rows();
  if (!rows) throw std::logic_error("lookup rows: the block is not a lookup");
  return rows->width;
}

}  // namespace

double lookup_rows_bytes(const models::Model& model, std::size_t block, const ZeroOptions& options, int world_size,
                         int B, int T) {
  const double positions = static_cast<double>(B) * T;
  const double per_position = static_cast<double>(row_width(model, block) * dtype_size(options.compute_dtype) +
                                                  dtype_size(DType::i32));
  return (world_size - 1) * positions * per_position;
}

double dense_reduction_bytes(const models::Model& model, std::size_t block, const ZeroOptions& options,
                             int world_size) {
  const double padded = static_cast<double>(
      padded_block_numel(model.block(block).param_count(), world_size, engine_chunk_alignment(world_size)));
  const double phases = options.stage == 0 ? 2.0 : 1.0;  // all-reduce = reduce-scatter + all-gather
  return phases * (world_size - 1) / world_size * padded * static_cast<double>(dtype_size(options.comm_dtype));
}

std::size_t lookup_rows_buffer_bytes(const models::Model& model, std::size_t block, const ZeroOptions& options,
                                     int world_size, int B, int T) {
  const std::size_t positions = static_cast<std::size_t>(world_size) * B * T;
  return positions * (dtype_size(DType::i32) + row_width(model, block) * dtype_size(options.compute_dtype));
}

std::optional<std::size_t> rows_exchanged_block(const models::Model& model, const ZeroOptions& options,
                                                int world_size, int B, int T, Device device) {
  if (options.embedding_gradient == EmbeddingGradient::dense || world_size < 2) return std::nullopt;
  const std::optional<std::size_t> block = tied_lookup_block(model);
  if (!block) return std::nullopt;
  if (!device.is_cpu()) {
    if (options.embedding_gradient == EmbeddingGradient::rows)
      throw std::invalid_argument(
          "zero_optimization.embedding_gradient: rows is not available on a GPU yet (its rows are added by host "
          "code); use auto or dense");
    return std::nullopt;
  }
  if (options.embedding_gradient == EmbeddingGradient::rows) return block;
  return lookup_rows_bytes(model, *block, options, world_size, B, T) <
                 dense_reduction_bytes(model, *block, options, world_size)
             ? block
             : std::nullopt;
}

LookupRowsExchange::LookupRowsExchange(const models::Model& model, std::size_t block, const PartitionPlan& plan,
                                       int B, int T, TwoLevelAllGather& gather, Stream& compute, Device device,
                                       DType dtype, ExposedTime& exposed, MemoryTracker& tracker)
    : plan_(plan),
      block_(block),
      rows_(*model.block(block).lookup_rows()),
      T_(T),
      positions_(static_cast<std::size_t>(B) * T),
      gather_(gather),
      compute_(compute),
      exposed_(exposed),
      tokens_(device, DType::i32, gather.communicator().world_size() * positions_, MemCategory::buckets, tracker),
      gradients_(device, dtype, gather.communicator().world_size() * positions_ * rows_.width, MemCategory::buckets,
                 tracker),
      row_(rows_.width) {
  if (!device.is_cpu()) throw std::invalid_argument("lookup rows: the exchange's rows are added on the host");
}

LookupRowsExchange::~LookupRowsExchange() {
  wait_before_freeing(tokens_work_);
  wait_before_freeing(gradients_work_);
}

void LookupRowsExchange::launch(BufferView tokens, BufferView d_output) {
  if (tokens.numel != positions_ || d_output.numel != positions_ * rows_.width)
    throw std::invalid_argument("lookup rows: tokens and output gradient must be one micro batch's");
  const TwoLevelAllGather::Issued tokens_issued = gather_.all_gather(tokens, tokens_.view(), compute_);
  const TwoLevelAllGather::Issued gradients_issued = gather_.all_gather(d_output, gradients_.view(), compute_);
  tokens_work_ = tokens_issued.done;
  gradients_work_ = gradients_issued.done;
  trace::record_parts(tokens_issued, "all_gather lookup tokens", {{"block", block_}}, works_, timeline_);
  trace::record_parts(gradients_issued, "all_gather lookup rows", {{"block", block_}}, works_, timeline_);
}

void LookupRowsExchange::add_into(BufferView grad_shard, int chunk_rank, float scale) {
  for (const Work* work : {&tokens_work_, &gradients_work_}) {
    exposed_.wait(*work, compute_, timeline_, [&] {
      return std::pair{std::string("wait lookup rows"), nlohmann::json{{"block", block_}}};
    });
  }
  const BlockPlacement& placement = plan_.block(block_);
  const std::size_t lo = static_cast<std::size_t>(chunk_rank) * placement.chunk_numel;  // in the block's flat gradient
  const std::size_t hi = lo + placement.chunk_numel;
  float* dst = grad_shard.as<float>() + placement.shard_offset;
  const std::int32_t* tokens = tokens_.data_as<std::int32_t>();
  const std::size_t width = rows_.width;
  const std::size_t row_bytes = width * dtype_size(gradients_.dtype());
  const auto* gradients = static_cast<const unsigned char*>(gradients_.data());
  auto add_row = [&](std::size_t row_begin) {
    if (row_begin + width > placement.numel) throw std::logic_error("lookup rows: a row beyond the block's parameter");
    const std::size_t begin = std::max(row_begin, lo), end = std::min(row_begin + width, hi);
    for (std::size_t e = begin; e < end; ++e) dst[e - lo] += scale * row_[e - row_begin];
  };
  // Rank by rank, position by position: every rank adds the same values in the same order.
  for (std::size_t i = 0; i < tokens_.numel(); ++i) {
    const std::size_t token = static_cast<std::size_t>(tokens[i]);
    const std::size_t token_row = rows_.token_table + token * width;
    const std::optional<std::size_t> position_row =
        rows_.position_table ? std::optional(*rows_.position_table + (i % positions_ % T_) * width) : std::nullopt;
    const bool touches_token = token_row < hi && token_row + width > lo;
    const bool touches_position = position_row && *position_row < hi && *position_row + width > lo;
    if (!touches_token && !touches_position) continue;
    convert_host(gradients + i * row_bytes, gradients_.dtype(), row_.data(), DType::f32, width);
    if (touches_token) add_row(token_row);
    if (touches_position) add_row(*position_row);
  }
}

}  // namespace zt
