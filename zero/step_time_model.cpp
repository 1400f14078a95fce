#include "zero/step_time_model.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/dtype.h"
#include "models/activations.h"
#include "zero/gradient_reducer.h"
#include "zero/lookup_rows.h"
#include "zero/memory_plan.h"
#include "zero/param_gatherer.h"
#include "zero/shard_optimizer.h"

namespace zt {
namespace {

// The α and β a ring of `world_size` ranks steps at (LinkModel says why).
LinkModel ring_link(const LinkModel& link, int world_size) {
  if (link.ranks_per_host <= 1) return link;
  const double intra_beta = link.intra_bytes_per_s > 0.0 ? link.intra_bytes_per_s : link.bytes_per_s;
  if (link.ranks_per_host >= world_size) return {.latency_s = link.intra_latency_s, .bytes_per_s = intra_beta};
  return {.latency_s = std::max(link.latency_s, link.intra_latency_s),
          .bytes_per_s = std::min(link.bytes_per_s, intra_beta)};
}

// (steps)·α + fraction·S/β with fraction = steps/N: a ring of N ranks takes N-1 steps per phase.
double ring_seconds(double bytes, int world_size, const LinkModel& given, int phases) {
  if (world_size <= 1) return 0.0;
  const LinkModel link = ring_link(given, world_size);
  const double steps = static_cast<double>(phases) * (world_size - 1);
  return steps * link.latency_s + steps / world_size * bytes / link.bytes_per_s;
}

double sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

// The time each block's gather ends when they are issued in `order`, block b at issue[b] (0 for
// every block when issue is empty), each on the link once it is free (0 for every block when there
// are no gathers).
std::vector<double> gather_ends(const std::vector<double>& gather_s, const std::vector<std::size_t>& order,
                                const std::vector<double>& issue = {}) {
  std::vector<double> ends(order.size(), 0.0);
  double link = -std::numeric_limits<double>::infinity();  // free until the first issue
  if (!gather_s.empty())
    for (std::size_t b : order) ends[b] = link = std::max(link, issue.empty() ? 0.0 : issue[b]) + gather_s[b];
  return ends;
}

// E_f: how much later than T_f forward ends when every block waits for its gather, issued at
// issue[b] relative to forward's start (before it: negative).
double forward_exposed(const std::vector<double>& share, double t_fwd, const std::vector<double>& gather_s,
                       const std::vector<double>& issue = {}) {
  std::vector<std::size_t> order(share.size());
  std::iota(order.begin(), order.end(), 0);
  const std::vector<double> ready = gather_ends(gather_s, order, issue);
  double t = 0.0;
  for (std::size_t b : order) t = std::max(t, ready[b]) + share[b] * t_fwd;
  return std::max(0.0, t - t_fwd);  // the shares' sum may round to just below 1
}

// When each block's gather can be taken to be issued, relative to the end of the optimizer step
// (the next forward's start): the optimizer updates the blocks in order, block b's update taking
// optimizer_s · o_b. A block published in K pieces gathers piece k (gather_s[b] / K) once piece k
// is updated; its gather ends as if issued whole at the latest of (piece k's update end - the
// gathers of the pieces before it). Empty when no shares are given: all at 0.
std::vector<double> published_at(const std::vector<double>& optimizer_share, double optimizer_s,
                                 const std::vector<std::size_t>& pieces, const std::vector<double>& gather_s) {
  std::vector<double> at;
  double done = 0.0;
  for (std::size_t b = 0; b < optimizer_share.size(); ++b) {
    const double begin = optimizer_s * (std::min(1.0, done) - 1.0);
    done += optimizer_share[b];
    const double update = optimizer_s * (std::min(1.0, done) - 1.0) - begin;
    const std::size_t k_pieces = pieces.empty() ? 1 : std::max<std::size_t>(1, pieces[b]);
    const double gather = gather_s.empty() ? 0.0 : gather_s[b];
    double issue = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < k_pieces; ++k)
      issue = std::max(issue, begin + update * static_cast<double>(k + 1) / static_cast<double>(k_pieces) -
                                  gather * static_cast<double>(k) / static_cast<double>(k_pieces));
    at.push_back(issue);
  }
  return at;
}

// What a backward replay needs besides each block's time.
struct BackwardLink {
  std::vector<double> gather_s;      // per block; empty or 0: none (its parameters are there already)
  std::vector<double> gather_bytes;  // per block, what the prefetch budget counts
  double prefetch_bytes = 0.0;       // gathered ahead of the block in use (infinity: all at once)
  std::vector<std::size_t> held;     // blocks still gathered from forward: they take the budget until used
  std::vector<double> reduce_s;      // per reduction, in the order built by predict_step_time
  std::vector<std::size_t> ready_block;
  std::vector<double> ready_early_s;  // per reduction: how long before ready_block's end it may go (empty: 0)
  std::vector<std::size_t> first_block;  // per buffered reduction: the block whose end takes its buffer
  std::size_t buffered = 0;          // the first `buffered` reductions take a bucket buffer
  std::size_t buffers = 0;           // bucket buffers (0: as many as needed)
  // Per buffered reduction (empty: none): compute run when its buffer is taken for a later bucket,
  // after waiting for it and before that bucket is issued (the gradient norm of the blocks it completed).
  std::vector<double> drain_s;
  bool gathers_on_own_link = false;  // a secondary partition's group
};

// The blocks that stay gathered from the end of forward into backward, as ParamGatherer holds
// them: the last block (backward reads it next), the persistent blocks (never freed), and, in
// backward's order, the others while their bytes with the held ones' before them fit the prefetch
// budget (the first of them whatever its size, when nothing held takes the budget and it is not
// zero). A block whose backward reads no parameters is not held. Backward reads the held blocks
// without a gather; the budget counts the non-persistent ones until backward reaches them.
std::vector<std::size_t> held_from_forward(const StepTimeInputs& in) {
  const std::size_t last = in.block_gather_bytes.size() - 1;
  auto reads = [&](std::size_t b) {
    return in.block_backward_reads_params.empty() || in.block_backward_reads_params[b];
  };
  auto persistent = [&](std::size_t b) { return !in.block_persistent.empty() && in.block_persistent[b]; };
  std::vector<std::size_t> held;
  double bytes = 0.0;  // of the held blocks the budget counts
  if (reads(last)) {
    held.push_back(last);
    if (!persistent(last)) bytes = in.block_gather_bytes[last];
  }
  bool within_budget = in.prefetch_bytes > 0.0;
  for (std::size_t b = last; b-- > 0;) {
    if (!reads(b)) continue;
    if (!persistent(b)) {
      if (!within_budget || (bytes > 0.0 && bytes + in.block_gather_bytes[b] > in.prefetch_bytes)) {
        within_budget = false;
        continue;
      }
      bytes += in.block_gather_bytes[b];
    }
    held.push_back(b);
  }
  return held;
}

// E_b: how much later than the sum of `block_s` (each block's backward, its recompute included)
// backward's work ends. Blocks run from last to first. Entering a block issues its gather and,
// within the prefetch budget, the next blocks' (ParamGatherer's rule: at least the next one when
// the budget is not zero), and waits for its own; its end takes a bucket buffer for each bucket
// it is the first block of, waiting (compute) for the reduction that held the buffer `buffers`
// buckets before, and issues the reductions it completes. One link runs the collectives in the
// order they are issued, gathers on a link of their own with a secondary partition. Compute that a
// buffer's drain adds (drain_s) is not counted as exposed.
double backward_exposed(const std::vector<double>& block_s, const BackwardLink& in) {
  const std::size_t blocks = block_s.size();
  auto gather_of = [&](std::size_t b) { return in.gather_s.empty() ? 0.0 : in.gather_s[b]; };
  std::vector<std::size_t> order(blocks);  // backward's
  std::iota(order.rbegin(), order.rend(), 0);
  double t = 0.0, link = 0.0, gather_link = 0.0, drained = 0.0;
  double& gathers = in.gathers_on_own_link ? gather_link : link;
  std::vector<double> gathered(blocks, -1.0);  // when each block's gather ends; -1: not issued
  std::vector<double> reduced(in.reduce_s.size(), 0.0);  // when each reduction ends (0: not yet issued)
  std::vector<std::size_t> acquired;                     // buffered reductions, in the order they took a buffer
  auto issue_gather = [&](std::size_t b) { gathered[b] = gathers = std::max(gathers, t) + gather_of(b); };
  for (std::size_t b : in.held) gathered[b] = 0.0;
  for (std::size_t step = 0; step < blocks; ++step) {
    const std::size_t b = order[step];
    const bool gathers_own = gather_of(b) > 0.0;
    if (gathers_own && gathered[b] < 0.0) issue_gather(b);
    double ahead = 0.0;  // issued for later blocks and not yet used
    for (std::size_t later = step + 1; later < blocks; ++later)
      if (gathered[order[later]] >= 0.0) ahead += in.gather_bytes[order[later]];
    for (std::size_t later = step + 1; later < blocks && in.prefetch_bytes > 0.0; ++later) {
      const std::size_t next = order[later];
      if (gathered[next] >= 0.0 || gather_of(next) == 0.0) continue;
      if (ahead > 0.0 && ahead + in.gather_bytes[next] > in.prefetch_bytes) break;
      issue_gather(next);
      ahead += in.gather_bytes[next];
    }
    if (gathers_own) t = std::max(t, gathered[b]);
    t += block_s[b];
    // A bucket takes its buffer when its first block ends, after the reduction of the bucket that
    // held the buffer before it (a bucket not yet reduced then holds nothing to wait for). The
    // reductions the block completes before its end (a tied gradient) go first, from that point.
    auto early = [&](std::size_t k) { return in.ready_early_s.empty() ? 0.0 : in.ready_early_s[k]; };
    auto take_buffer_and_issue = [&](std::size_t k) {
      if (k < in.buffered && in.buffers > 0 && in.first_block[k] == b) {
        if (acquired.size() >= in.buffers) {
          const std::size_t held = acquired[acquired.size() - in.buffers];
          const double drain = in.drain_s.empty() ? 0.0 : in.drain_s[held];
          t = std::max(t, reduced[held]) + drain;
          drained += drain;
        }
        acquired.push_back(k);
      }
      if (in.ready_block[k] == b) reduced[k] = link = std::max(link, t - early(k)) + in.reduce_s[k];
    };
    for (std::size_t k = 0; k < in.reduce_s.size(); ++k)
      if (in.ready_block[k] == b && early(k) > 0.0) take_buffer_and_issue(k);
    for (std::size_t k = 0; k < in.reduce_s.size(); ++k)
      if (in.ready_block[k] != b || early(k) == 0.0) take_buffer_and_issue(k);
  }
  return std::max(0.0, std::max(t, link) - sum(block_s) - drained);
}

void check(const StepTimeInputs& in) {
  if (in.stage < 0 || in.stage > 3) throw std::invalid_argument("predict_step_time: stage must be 0-3");
  if (in.world_size < 1 || in.micro_batches < 1)
    throw std::invalid_argument("predict_step_time: world_size and micro_batches must be at least 1");
  if (in.link.ranks_per_host < 1 || !(in.link.intra_latency_s >= 0.0) || !(in.link.intra_bytes_per_s >= 0.0))
    throw std::invalid_argument("predict_step_time: ranks per host must be at least 1, the intra-host link not negative");
  if (!(in.micro_batch_compute_s >= 0.0) || !(in.optimizer_s >= 0.0) || !(in.statistics_s >= 0.0) ||
      !(in.link.latency_s >= 0.0))
    throw std::invalid_argument("predict_step_time: compute time and latency must not be negative");
  if (in.world_size > 1 && !(ring_link(in.link, in.world_size).bytes_per_s > 0.0))
    throw std::invalid_argument("predict_step_time: the link bandwidth must be positive");
  if (in.block_compute_share.empty()) throw std::invalid_argument("predict_step_time: a model has blocks");
  for (double w : in.block_compute_share)
    if (!(w >= 0.0)) throw std::invalid_argument("predict_step_time: a block's compute share must not be negative");
  if (!in.bucket_ready_share.empty() && in.bucket_ready_share.size() != in.bucket_comm_bytes.size())
    throw std::invalid_argument("predict_step_time: ready shares are per bucket, or not given");
  for (double s : in.bucket_ready_share)
    if (!(s >= 0.0 && s <= 1.0)) throw std::invalid_argument("predict_step_time: a ready share lies in [0, 1]");
  if (in.bucket_ready_block.size() != in.bucket_comm_bytes.size() ||
      (!in.bucket_first_block.empty() && in.bucket_first_block.size() != in.bucket_comm_bytes.size()))
    throw std::invalid_argument("predict_step_time: every bucket needs the block that completes it (and its first)");
  for (const std::vector<std::size_t>* blocks : {&in.bucket_ready_block, &in.bucket_first_block})
    for (std::size_t b : *blocks)
      if (b >= in.block_compute_share.size())
        throw std::invalid_argument("predict_step_time: a bucket names a block the model does not have");
  if (!(in.rows_gather_bytes >= 0.0) || (in.rows_gather_bytes > 0.0 &&
                                         (in.rows_ready_block == 0 || in.rows_ready_block >= in.block_compute_share.size())))
    throw std::invalid_argument("predict_step_time: a rows exchange needs its bytes and a block the model has");
  if (in.stage > 0 && in.block_gather_bytes.size() != in.block_compute_share.size())
    throw std::invalid_argument("predict_step_time: one gather size per block is needed at stages 1-3");
  const std::size_t blocks = in.block_compute_share.size();
  if ((!in.block_backward_reads_params.empty() && in.block_backward_reads_params.size() != blocks) ||
      (!in.block_persistent.empty() && in.block_persistent.size() != blocks))
    throw std::invalid_argument("predict_step_time: backward reads and persistence are per block, or not given");
  if (!in.block_optimizer_share.empty() && in.block_optimizer_share.size() != blocks)
    throw std::invalid_argument("predict_step_time: optimizer shares are per block, or not given");
  if ((!in.block_publish_pieces.empty() && in.block_publish_pieces.size() != blocks) ||
      std::find(in.block_publish_pieces.begin(), in.block_publish_pieces.end(), 0) != in.block_publish_pieces.end())
    throw std::invalid_argument("predict_step_time: publish pieces are per block (at least one), or not given");
  for (double s : in.block_optimizer_share)
    if (!(s >= 0.0)) throw std::invalid_argument("predict_step_time: an optimizer share must not be negative");
  if (!(in.prefetch_bytes >= 0.0))
    throw std::invalid_argument("predict_step_time: the prefetch budget must not be negative");
  if (in.hpz_group_size < 1 || in.world_size % in.hpz_group_size != 0)
    throw std::invalid_argument("predict_step_time: the secondary partition's group size must divide the world size");
  if (!in.bucket_statistics_s.empty() && in.bucket_statistics_s.size() != in.bucket_comm_bytes.size())
    throw std::invalid_argument("predict_step_time: the statistics measured at buckets are per bucket, or not given");
  for (double s : in.bucket_statistics_s)
    if (!(s >= 0.0)) throw std::invalid_argument("predict_step_time: a statistics time must not be negative");
  if (!in.block_recompute_s.empty() && in.block_recompute_s.size() != blocks)
    throw std::invalid_argument("predict_step_time: recompute times are per block, or not given");
  for (double s : in.block_recompute_s)
    if (!(s >= 0.0)) throw std::invalid_argument("predict_step_time: a recompute time must not be negative");
}

}  // namespace

double all_reduce_seconds(double bytes, int world_size, const LinkModel& link) {
  return ring_seconds(bytes, world_size, link, 2);
}

double reduce_scatter_seconds(double bytes, int world_size, const LinkModel& link) {
  return ring_seconds(bytes, world_size, link, 1);
}

double all_gather_seconds(double bytes, int world_size, const LinkModel& link) {
  const int per_host = link.ranks_per_host;
  if (!link.two_level_all_gather || per_host <= 1 || per_host >= world_size || world_size % per_host != 0)
    return ring_seconds(bytes, world_size, link, 1);
  const double hosts = static_cast<double>(world_size / per_host);
  const double intra_beta = link.intra_bytes_per_s > 0.0 ? link.intra_bytes_per_s : link.bytes_per_s;
  // Across hosts: H-1 steps, each moving one chunk of each of the host's L ranks over its link.
  const double across = (hosts - 1.0) * (link.latency_s + per_host * bytes / world_size / link.bytes_per_s);
  // Within each host: H rings of L ranks, L-1 steps of one chunk each.
  const double within = hosts * (per_host - 1) * (link.intra_latency_s + bytes / world_size / intra_beta);
  return across + within;
}

StepTimePrediction predict_step_time(const StepTimeInputs& in) {
  check(in);
  const int n = in.world_size;
  const double t_fwd = in.micro_batch_compute_s / 3.0;
  const double t_bwd = in.micro_batch_compute_s - t_fwd;
  const double g = in.micro_batches;
  const double reductions = in.stage >= 2 ? g : 1.0;  // M

  std::vector<double> reduce, gather;
  for (double bytes : in.bucket_comm_bytes)
    reduce.push_back(in.stage == 0 ? all_reduce_seconds(bytes, n, in.link) : reduce_scatter_seconds(bytes, n, in.link));
  std::vector<std::size_t> reduce_ready = in.bucket_ready_block;
  if (in.rows_gather_bytes > 0.0) {
    reduce.push_back(all_gather_seconds(in.rows_gather_bytes, n, in.link));
    reduce_ready.push_back(in.rows_ready_block);
  }
  std::vector<double> reduce_early(reduce.size(), 0.0);  // a bucket completed before its block's end
  for (std::size_t k = 0; k < in.bucket_ready_share.size(); ++k)
    reduce_early[k] = (1.0 - in.bucket_ready_share[k]) * in.block_compute_share[in.bucket_ready_block[k]] * t_bwd;
  if (in.stage > 0)
    for (std::size_t b = 0; b < in.block_gather_bytes.size(); ++b) {
      // A block published in K pieces: K all-gathers, each paying the ring's latency.
      const double k = in.block_publish_pieces.empty() ? 1.0 : static_cast<double>(in.block_publish_pieces[b]);
      gather.push_back(k * all_gather_seconds(in.block_gather_bytes[b] / k, n, in.link));
    }
  const double r = sum(reduce), a = sum(gather);  // r: with the rows exchange, if any
  const double statistics = n > 1 ? 2.0 * (n - 1) * ring_link(in.link, n).latency_s : 0.0;
  const std::vector<double>& w = in.block_compute_share;
  // Each block's backward, with the forward recomputed before it (activation checkpointing).
  std::vector<double> backward_s(w.size());
  for (std::size_t b = 0; b < w.size(); ++b)
    backward_s[b] = w[b] * t_bwd + (in.block_recompute_s.empty() ? 0.0 : in.block_recompute_s[b]);
  // A block exchanged as rows (the one before rows_ready_block) runs no backward of its own.
  double skipped_s = 0.0;
  if (in.rows_gather_bytes > 0.0) skipped_s = std::exchange(backward_s[in.rows_ready_block - 1], 0.0);

  StepTimePrediction p;
  p.compute_s =
      g * (in.micro_batch_compute_s + sum(in.block_recompute_s) - skipped_s) + in.statistics_s +
      sum(in.bucket_statistics_s) + in.optimizer_s;
  const std::vector<double> published =
      published_at(in.block_optimizer_share, in.optimizer_s, in.block_publish_pieces, gather);
  BackwardLink backward;  // the reductions; stage 3 adds its gathers
  backward.reduce_s = reduce;
  backward.ready_block = reduce_ready;
  backward.ready_early_s = reduce_early;
  backward.first_block = in.bucket_first_block.empty() ? in.bucket_ready_block : in.bucket_first_block;
  backward.buffered = in.bucket_comm_bytes.size();
  backward.buffers = in.bucket_buffers;
  // The last micro batch's backward also measures the gradient norm of the blocks whose reductions
  // landed, as their buffers are taken again.
  auto last_backward_exposed = [&] {
    backward.drain_s = in.bucket_statistics_s;
    const double e = backward_exposed(backward_s, backward);
    backward.drain_s.clear();
    return e;
  };
  if (in.stage < 3) {
    const double e_fwd = forward_exposed(w, t_fwd, gather, published);
    const double e_bwd = backward_exposed(backward_s, backward);
    const double forward_waits = in.stage > 0 ? e_fwd : 0.0;  // stage 0 gathers nothing
    p.comm_s = reductions * r + a + statistics;
    p.exposed_s = (reductions - 1.0) * e_bwd + last_backward_exposed() + forward_waits + statistics;
    p.step_without_overlap_s = p.compute_s + reductions * r + forward_waits + statistics;
  } else {
    // A block gathered again before the next update: from every rank's shard, or with a secondary
    // partition from the group's slices (a ring of the group's ranks, on its own link).
    const bool grouped = in.hpz_group_size > 1;
    // Groups lie inside hosts when they tile the hosts' ranks; otherwise some cross the slower link.
    LinkModel group_link = in.link;
    if (in.link.ranks_per_host % in.hpz_group_size != 0) group_link.ranks_per_host = 1;
    auto regather_seconds = [&](double bytes) {
      return grouped ? all_gather_seconds(bytes, in.hpz_group_size, group_link) : all_gather_seconds(bytes, n, in.link);
    };
    std::vector<double> regather;
    for (double bytes : in.block_gather_bytes) regather.push_back(regather_seconds(bytes));
    // The step's first forward gathers each block from the shards; later forwards regather.
    const std::vector<double>& first_forward_gather = gather;
    const std::vector<double>& forward_gather = regather;
    // Backward gathers the blocks whose backward reads their parameters, but not those still
    // gathered from the end of forward: the last block (and the block tied to it), which backward
    // runs first, and the blocks before it within the prefetch budget.
    std::vector<double> backward_gather = regather;
    for (std::size_t b = 0; b < in.block_backward_reads_params.size(); ++b)
      if (!in.block_backward_reads_params[b]) backward_gather[b] = 0.0;
    const std::vector<std::size_t> held = held_from_forward(in);
    for (std::size_t b : held) backward_gather[b] = 0.0;
    p.comm_s = reductions * r + sum(first_forward_gather) + (g - 1) * sum(forward_gather) +
               g * sum(backward_gather) + statistics;
    // The first forward of a step finds its first block's gather issued as soon as the optimizer
    // updated that block; later micro batches' forwards gather it when they begin.
    std::vector<double> first_issue;
    if (!published.empty()) {
      first_issue.assign(w.size(), 0.0);
      first_issue[0] = published[0];
    }
    const double forwards_exposed = (g - 1) * forward_exposed(w, t_fwd, forward_gather) +
                                    forward_exposed(w, t_fwd, first_forward_gather, first_issue);
    backward.gather_s = backward_gather;
    backward.gather_bytes = in.block_gather_bytes;  // what the budget counts: not the persistent blocks
    for (std::size_t b = 0; b < in.block_persistent.size(); ++b)
      if (in.block_persistent[b]) backward.gather_bytes[b] = 0.0;
    backward.prefetch_bytes = in.prefetch_bytes;
    backward.held = held;
    backward.gathers_on_own_link = grouped;
    const double e_bwd = backward_exposed(backward_s, backward);
    p.exposed_s = (g - 1.0) * e_bwd + last_backward_exposed() + forwards_exposed + statistics;
    backward.reduce_s.clear();  // without overlap: after backward, which then has its gathers alone
    backward.ready_block.clear();
    backward.ready_early_s.clear();
    p.step_without_overlap_s = p.compute_s + g * (r + backward_exposed(backward_s, backward)) + forwards_exposed +
                               statistics;
  }
  p.step_s = p.compute_s + p.exposed_s;
  return p;
}

namespace {

// The rows block's buckets that hold it alone, as GradientReducer packs them (rows_bucket_spread):
// the first ones with the report that completes it (its user's, `share` of the way through that
// block's backward), the others a few with each later block's end, in backward order. buffers: the
// bucket buffers the reducer takes in turn (0: it reduces in place).
void spread_rows_buckets(const PartitionPlan& plan, std::size_t rows, std::size_t user, double share,
                         std::size_t buffers, StepTimeInputs& in) {
  std::vector<std::pair<std::size_t, double>> reports{{user, share}};
  if (share < 1.0) reports.emplace_back(user, 1.0);  // the user's own end is a later report
  for (std::size_t b = user; b-- > 0;)
    if (b != rows) reports.emplace_back(b, 1.0);
  std::vector<std::size_t> own;
  for (std::size_t bucket : plan.block(rows).buckets)
    if (plan.bucket(bucket).pieces.size() == 1) own.push_back(bucket);
  const std::size_t spare = buffers > 0 ? std::min(buffers, plan.buckets().size()) - 1 : 0;
  const RowsBucketSpread spread = rows_bucket_spread(own.size(), reports.size() - 1, spare);
  for (std::size_t j = 0; j < own.size(); ++j) {
    const std::size_t report = j < spread.first ? 0 : 1 + (j - spread.first) / spread.per_report;
    const auto& [block, at] = reports[std::min(report, reports.size() - 1)];
    in.bucket_ready_block[own[j]] = block;
    in.bucket_ready_share[own[j]] = at;
    in.bucket_first_block[own[j]] = block;
  }
}

}  // namespace

StepTimeInputs step_time_inputs(const models::Model& model, const ZeroOptions& options, int world_size, int B, int T,
                                Device device, const models::DeviceRates& rates, const LinkModel& link) {
  const PartitionPlan plan = make_partition_plan(model, options, world_size);
  StepTimeInputs in;
  in.stage = options.stage;
  in.world_size = world_size;
  in.micro_batches = options.gradient_accumulation_steps;
  in.link = link;
  const std::size_t blocks = model.num_blocks();
  const std::vector<bool> recomputed = models::Activations::recomputed_blocks(model, options.recompute_every);
  for (std::size_t b = 0; b < blocks; ++b) {
    const models::BlockTime time = models::block_time(model.block(b), B, T, options.compute_dtype, rates);
    in.block_compute_share.push_back(time.total());
    if (options.recompute_every > 0) in.block_recompute_s.push_back(recomputed[b] ? time.forward_s : 0.0);
  }
  in.micro_batch_compute_s = sum(in.block_compute_share);
  in.optimizer_s = models::optimizer_step_seconds(plan.shard_numel(), options.compute_dtype, rates);
  for (std::size_t b = 0; b < blocks; ++b)
    in.block_optimizer_share.push_back(static_cast<double>(plan.block(b).chunk_numel) /
                                       static_cast<double>(plan.shard_numel()));
  if (options.stage > 0) in.block_publish_pieces = publish_pieces(plan);
  for (double& w : in.block_compute_share)
    w = in.micro_batch_compute_s > 0.0 ? w / in.micro_batch_compute_s : 1.0 / static_cast<double>(blocks);

  // A block's gradient is complete when the last of its users' backward ends: its own, or that of
  // a block tied to it (GPT-2's LM head adds to the embedding's gradient first). A tied embedding
  // exchanged as rows: the blocks tied to it only, and its rows gathered when backward reaches it.
  // The last contributor may add its part before its own backward ends (completed_share).
  std::vector<std::size_t> completed_by(blocks);
  std::iota(completed_by.begin(), completed_by.end(), 0);
  std::vector<double> completed_share(blocks, 1.0);
  const std::optional<std::size_t> rows = rows_exchanged_block(model, options, world_size, B, T, device);
  if (rows) {
    completed_by[*rows] = blocks;  // by the blocks tied to it alone (one at least)
    in.rows_gather_bytes = static_cast<double>(lookup_rows_buffer_bytes(model, *rows, options, world_size, B, T));
    in.rows_ready_block = *rows + 1;
  }
  for (std::size_t b = 0; b < blocks; ++b)
    if (const auto tied = model.block(b).tied_block(); tied && b < completed_by[*tied]) {
      completed_by[*tied] = b;
      completed_share[*tied] = model.block(b).tied_grads_done_share();
    }

  const double comm_size = static_cast<double>(dtype_size(options.comm_dtype));
  const double compute_size = static_cast<double>(dtype_size(options.compute_dtype));
  for (std::size_t k = 0; k < plan.buckets().size(); ++k) {
    in.bucket_comm_bytes.push_back(static_cast<double>(plan.bucket(k).numel(plan.shards())) * comm_size);
    std::size_t ready = blocks - 1, first = 0;
    for (std::size_t b : plan.bucket(k).blocks()) {
      ready = std::min(ready, completed_by[b]);
      first = std::max(first, completed_by[b]);
    }
    double share = 0.0;  // the latest of the pieces that the ready block completes
    for (std::size_t b : plan.bucket(k).blocks())
      if (completed_by[b] == ready) share = std::max(share, completed_share[b]);
    in.bucket_ready_block.push_back(ready);
    in.bucket_ready_share.push_back(share);
    in.bucket_first_block.push_back(first);
  }
  // The engine's reducer takes its buffers in turn (none where it reduces in place).
  if (plan.reduction() != GradientReduction::in_place)
    in.bucket_buffers = std::max<std::size_t>(2, bucket_buffer_count(plan, options));
  if (rows) spread_rows_buckets(plan, *rows, completed_by[*rows], completed_share[*rows], in.bucket_buffers, in);
  // The gradient norm measures a block when its last bucket's buffer is taken again, or when
  // backward ends for the last buckets, which still hold the buffers then (every bucket, in place),
  // and for the rows block, whose rows are added after backward.
  const std::size_t buckets = plan.buckets().size();
  const std::size_t slots = in.bucket_buffers == 0 ? buckets : std::min(in.bucket_buffers, buckets);
  in.bucket_statistics_s.assign(buckets, 0.0);
  for (std::size_t b = 0; b < blocks; ++b) {
    const double seconds = models::gradient_statistics_seconds(plan.block(b).chunk_numel, rates);
    const std::vector<std::size_t>& own = plan.block(b).buckets;  // in order
    const std::size_t last = own.empty() ? buckets : own.back();
    if (b == rows || last + slots >= buckets)
      in.statistics_s += seconds;
    else
      in.bucket_statistics_s[last] += seconds;
  }
  if (options.stage > 0)
    for (std::size_t b = 0; b < blocks; ++b)
      in.block_gather_bytes.push_back(static_cast<double>(plan.block(b).padded_numel) * compute_size);
  if (options.stage == 3) {
    in.prefetch_bytes = static_cast<double>(options.stage3_prefetch_bucket_size) * compute_size;
    in.hpz_group_size = options.zero_hpz_partition_size;
    for (std::size_t b = 0; b < blocks; ++b) {
      in.block_backward_reads_params.push_back(model.block(b).backward_reads_params());
      in.block_persistent.push_back(is_persistent(plan, b, options.stage3_param_persistence_threshold));
    }
  }
  return in;
}

}  // namespace zt
