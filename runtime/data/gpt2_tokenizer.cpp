#include "runtime/data/gpt2_tokenizer.h"

#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "runtime/data/gpt2_pretokenizer.h"

namespace zt::data {
namespace {

constexpr std::string_view kEndOfTextSymbol = "<|endoftext|>";
// Beyond this many cached words the cache is dropped and refilled, bounding its memory.
constexpr std::size_t kMaxCachedPieces = 1 << 20;

std::string read_text_file(const std::filesystem::path& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot open the GPT-2 {} file", path.string(), what));
  std::ostringstream content;
  content << in.rdbuf();
  return std::move(content).str();
}

// Decodes UTF-8 (valid, as vocab.json is JSON) into code points.
std::vector<char32_t> code_points_of(std::string_view utf8) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < utf8.size();) {
    const auto lead = static_cast<unsigned char>(utf8[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    char32_t cp = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length && i + k < utf8.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
    }
    out.push_back(cp);
    i += length;
  }
  return out;
}

}  // namespace

Gpt2Tokenizer::Gpt2Tokenizer(const std::filesystem::path& vocab_json, const std::filesystem::path& merges_txt) {
  read_vocab(vocab_json);
  read_merges(merges_txt);
}

void Gpt2Tokenizer::read_vocab(const std::filesystem::path& vocab_json) {
  const std::string file = vocab_json.string();
  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(read_text_file(vocab_json, "vocab.json"));
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(fmt::format("{}: not valid JSON: {}", file, e.what()));
  }
  if (!vocab.is_object() || vocab.empty()) {
    throw UserError(fmt::format("{}: expected a JSON object mapping token strings to ids", file));
  }
  int max_id = -1;
  for (const auto& [symbol, id_json] : vocab.items()) {
    if (!id_json.is_number_integer() || id_json.get<long long>() < 0 ||
        id_json.get<long long>() > std::numeric_limits<std::uint16_t>::max()) {
      throw UserError(fmt::format("{}: the id of token \"{}\" is {}, expected an integer in [0, 65535] "
                                  "(token shards store uint16 ids)",
                                  file, symbol, id_json.dump()));
    }
    const auto id = id_json.get<std::uint16_t>();
    id_of_symbol_.emplace(symbol, id);
    max_id = std::max<int>(max_id, id);
  }
  vocab_size_ = max_id + 1;
  bytes_of_id_.assign(static_cast<std::size_t>(vocab_size_), {});
  for (const auto& [symbol, id] : id_of_symbol_) {
    std::string& bytes = bytes_of_id_[id];
    if (symbol == kEndOfTextSymbol) {
      bytes = symbol;
      continue;
    }
    for (const char32_t cp : code_points_of(symbol)) {
      const auto byte = byte_map_.byte_of(cp);
      if (!byte) {
        throw UserError(fmt::format("{}: token \"{}\" (id {}) has a character, U+{:04X}, that stands for no byte "
                                    "in GPT-2's byte encoding",
                                    file, symbol, id, static_cast<std::uint32_t>(cp)));
      }
      bytes.push_back(static_cast<char>(*byte));
    }
  }
  for (int byte = 0; byte < 256; ++byte) {
    if (!id_of_symbol_.contains(byte_map_.symbol(static_cast<std::uint8_t>(byte)))) {
      throw UserError(fmt::format("{}: no token for byte 0x{:02X} (\"{}\"); a GPT-2 vocabulary has one for every byte",
                                  file, byte, byte_map_.symbol(static_cast<std::uint8_t>(byte))));
    }
  }
  const auto end_of_text = id_of_symbol_.find(kEndOfTextSymbol);
  if (end_of_text == id_of_symbol_.end()) {
    throw UserError(fmt::format("{}: no \"{}\" token to separate documents", file, kEndOfTextSymbol));
  }
  end_of_text_ = end_of_text->second;
}

void Gpt2Tokenizer::read_merges(const std::filesystem::path& merges_txt) {
  const std::string file = merges_txt.string();
  std::istringstream lines(read_text_file(merges_txt, "merges.txt"));
  std::string line;
  int line_number = 0;
  int rank = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_number == 1 && line.starts_with("#version"))) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string::npos) {
      throw UserError(fmt::format("{}:{}: expected a merge \"LEFT RIGHT\" (two tokens, one space), found \"{}\"", file,
                                  line_number, line));
    }
    const std::string merged = line.substr(0, space) + line.substr(space + 1);
    if (!id_of_symbol_.contains(merged)) {
      throw UserError(fmt::format("{}:{}: the merge \"{}\" makes \"{}\", which is not in the vocabulary", file,
                                  line_number, line, merged));
    }
    merge_rank_.emplace(line, rank++);  // a repeated merge keeps its first (best) rank
  }
}

void Gpt2Tokenizer::encode(std::string_view text, std::vector<std::uint16_t>& tokens) {
  pieces_.clear();
  split_gpt2_pieces(text, pieces_);
  for (const std::string_view piece : pieces_) encode_piece(piece, tokens);
}

void Gpt2Tokenizer::encode_piece(std::string_view piece, std::vector<std::uint16_t>& tokens) {
  if (const auto cached = piece_cache_.find(piece); cached != piece_cache_.end()) {
    tokens.insert(tokens.end(), cached->second.begin(), cached->second.end());
    return;
  }
  symbols_.clear();
  for (const char c : piece) symbols_.push_back(byte_map_.symbol(static_cast<std::uint8_t>(c)));

  while (symbols_.size() > 1) {
    // The adjacent pair that merges first.
    int best_rank = std::numeric_limits<int>::max();
    std::size_t best = 0;
    for (std::size_t i = 0; i + 1 < symbols_.size(); ++i) {
      pair_key_.assign(symbols_[i]).append(" ").append(symbols_[i + 1]);
      if (const auto rank = merge_rank_.find(pair_key_); rank != merge_rank_.end() && rank->second < best_rank) {
        best_rank = rank->second;
        best = i;
      }
    }
    if (best_rank == std::numeric_limits<int>::max()) break;
    // Merge every occurrence of that pair, left to right, starting from its first one.
    const std::string left = symbols_[best];
    const std::string right = symbols_[best + 1];
    std::size_t write = best;
    for (std::size_t read = best; read < symbols_.size(); ++write) {
      if (read + 1 < symbols_.size() && symbols_[read] == left && symbols_[read + 1] == right) {
        symbols_[write] = left + right;
        read += 2;
      } else {
        if (write != read) symbols_[write] = std::move(symbols_[read]);
        read += 1;
      }
    }
    symbols_.resize(write);
  }

  std::vector<std::uint16_t> ids;
  ids.reserve(symbols_.size());
  for (const std::string& symbol : symbols_) ids.push_back(id_of_symbol_.find(symbol)->second);  // checked at load
  tokens.insert(tokens.end(), ids.begin(), ids.end());
  if (piece_cache_.size() >= kMaxCachedPieces) piece_cache_.clear();
  piece_cache_.emplace(std::string(piece), std::move(ids));
}

std::string Gpt2Tokenizer::decode(std::span<const std::uint16_t> tokens) const {
  std::string text;
  for (const std::uint16_t token : tokens) {
    if (token >= bytes_of_id_.size() || bytes_of_id_[token].empty()) {
      throw std::invalid_argument(fmt::format("token {} is not in the GPT-2 vocabulary", token));
    }
    text += bytes_of_id_[token];
  }
  return text;
}

std::unique_ptr<Tokenizer> load_gpt2_tokenizer(const std::filesystem::path& vocab_json,
                                               const std::filesystem::path& merges_txt) {
  return std::make_unique<Gpt2Tokenizer>(vocab_json, merges_txt);
}

}  // namespace zt::data
