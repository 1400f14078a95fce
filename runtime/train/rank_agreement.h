// The start-up check that every rank is about to run the same job: the same resolved config and
// the same training/validation data and the same model.init_from weights. Ranks that disagree (a different --set on one node, another
// copy of the data, a stale file) would otherwise hang in mismatched collectives or, worse, train
// on silently; here they stop before the first step with a message that names the difference.
//
// Each rank sends a fingerprint (every config key's value, and digests of the data files, see
// dataset_fingerprint.h) to every other (one MPI all-gather of a few KiB), so all ranks reach the
// same verdict and stop together.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "runtime/config/config.h"
#include "runtime/train/dataset_fingerprint.h"

namespace zt {

struct RankFingerprint {
  std::vector<std::pair<std::string, std::string>> config;  // key path -> value as the YAML writes it
  std::vector<DataFileDigest> train_files;
  std::vector<DataFileDigest> val_files;  // only when validation runs
  std::string data_error;                 // why the data could not be digested; empty when it could
  // model.init_from's config.json and weights (node-local copies may differ), and why they could
  // not be digested; neither when the run resumes from a checkpoint, which reads none of them.
  std::vector<DataFileDigest> init_files;
  std::string init_error;
};

// The keys ranks may set differently: they only change what this rank prints or which local GPU it
// takes, never what the collectives see.
bool is_rank_local_key(const std::string& path);

RankFingerprint fingerprint_of(const Config& config);
std::string to_json_text(const RankFingerprint& fingerprint);
RankFingerprint fingerprint_from_json_text(const std::string& text);

// One line per difference between `other` (of rank other_rank) and the reference (rank 0's), e.g.
// "rank 1's config differs from rank 0's at train.steps: 20 (rank 0) vs 7 (rank 1)"; empty when
// they agree.
std::vector<std::string> describe_differences(const RankFingerprint& reference, const RankFingerprint& other,
                                              int other_rank);

// Collective over comm. Returns when all ranks agree; otherwise rank 0 logs every difference and
// every rank throws JobStopped(kExitRanksDisagree).
void check_ranks_agree(MPI_Comm comm, const Config& config);

}  // namespace zt
