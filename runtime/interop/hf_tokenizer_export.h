// The tokenizer files of a Hugging Face export, so that transformers' AutoTokenizer reads text the
// way the run's data was tokenized and generate() knows which token ends a document.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "runtime/data/tokenizer.h"

namespace zt::interop {

struct HfTokenizerExport {
  std::vector<std::pair<std::string, std::string>> files;  // file name in the export -> content
  std::int64_t end_of_text = 0;  // bos, eos and pad id of config.json and generation_config.json
};

// byte: tokenizer.json of the `tokenizers` library, a BPE without merges over GPT-2's byte symbols
// (each byte one token whose id is the byte's value; id 0, the run's end-of-text in place of
// NUL, is <|endoftext|>). gpt2: the run's vocab.json and merges.txt as they are (read from
// `vocab_json`, `merges_txt`). Both with tokenizer_config.json (model_max_length: the sequence
// length the model was trained on) and generation_config.json.
HfTokenizerExport hf_tokenizer_export(const data::Tokenizer& tokenizer, const std::filesystem::path& vocab_json,
                                      const std::filesystem::path& merges_txt, std::int64_t model_max_length);

}  // namespace zt::interop
