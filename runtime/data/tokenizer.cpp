#include "runtime/data/tokenizer.h"

#include <fmt/format.h>

#include "core/error.h"

namespace zt::data {

std::unique_ptr<Tokenizer> make_tokenizer(std::string_view kind, const std::filesystem::path& vocab_json,
                                          const std::filesystem::path& merges_txt) {
  if (kind == "byte") {
    if (!vocab_json.empty() || !merges_txt.empty()) {
      throw UserError("the byte tokenizer takes no vocab or merges file (did you mean --tokenizer gpt2?)");
    }
    return make_byte_tokenizer();
  }
  if (kind == "gpt2") {
    if (vocab_json.empty() || merges_txt.empty()) {
      throw UserError("the gpt2 tokenizer needs both GPT-2 files: vocab.json and merges.txt");
    }
    return load_gpt2_tokenizer(vocab_json, merges_txt);
  }
  throw UserError(fmt::format("unknown tokenizer \"{}\", expected \"byte\" or \"gpt2\"", kind));
}

}  // namespace zt::data
