// Text files -> train/val token shards + dataset.json (the `zerotrain prepare-data` command).
//
// Documents (see documents.h) are numbered 0, 1, 2, ... across the inputs in the order given, and
// document i goes to the validation split when floor((i+1)·f) > floor(i·f), f = val_fraction:
// exactly floor(D·f) of D documents, evenly spread over the inputs, the same on every run. In
// each split every document is preceded by the tokenizer's end-of-text token (as llm.c's data
// scripts do), and the stream is cut into shards of `shard_tokens` tokens (a document may
// continue in the next shard):
//   OUTPUT/train_000000.bin, train_000001.bin, ...   OUTPUT/val_000000.bin, ...
//   OUTPUT/dataset.json: tokenizer, vocabulary size, end-of-text id, and per split the documents,
//                        tokens and shard files.
// Everything is written into a staging directory inside OUTPUT first; only when all of it is
// complete are the shards and dataset.json of an earlier run removed and the new ones renamed in.
// Bad inputs therefore leave an existing dataset untouched.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/data/documents.h"
#include "runtime/data/shard_format.h"
#include "runtime/data/tokenizer.h"

namespace zt::data {

struct PrepareDataOptions {
  std::vector<std::filesystem::path> inputs;  // text files
  std::filesystem::path output_dir;
  double val_fraction = 0.1;                   // in [0, 1)
  std::uint64_t shard_tokens = 100'000'000;    // tokens per shard file (llm.c uses 10^8)
  ShardFormat shard_format = ShardFormat::gpt2;  // llama3: uint32 tokens
  DocumentRule document_rule = DocumentRule::automatic;
};

struct SplitSummary {
  std::uint64_t documents = 0;
  std::uint64_t tokens = 0;  // end-of-text tokens included
  std::vector<std::filesystem::path> shards;
};

struct PreparedDataset {
  std::string tokenizer;
  int vocab_size = 0;
  std::uint16_t end_of_text = 0;
  SplitSummary train;
  SplitSummary val;
};

inline constexpr std::string_view kDatasetSummaryFile = "dataset.json";

// Throws zt::UserError naming the file on an unreadable input, a byte-tokenizer input that holds a
// NUL byte (reserved for end-of-text), no documents at all, or a split left empty.
PreparedDataset prepare_data(const PrepareDataOptions& options, Tokenizer& tokenizer);

}  // namespace zt::data
