#include "runtime/data/documents.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"

namespace zt::data {
namespace {

// Calls `visit(line)` for each line of `text`, without its "\n" or "\r\n".
template <typename Visit> void for_each_line(std::string_view text, Visit&& visit) {
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    if (line.ends_with('\r')) line.remove_suffix(1);
    visit(line);
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
}

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); });
}

bool is_fortune_separator(std::string_view line) { return line == "%"; }

// Collects the lines of one document and emits it, trimmed of blank lines at either end.
class DocumentBuilder {
 public:
  explicit DocumentBuilder(std::vector<std::string>& documents) : documents_(documents) {}

  void add_line(std::string_view line) {
    if (is_blank(line)) {
      if (!text_.empty()) ++pending_blank_lines_;  // kept only if more text follows
      return;
    }
    if (!text_.empty()) text_.append(pending_blank_lines_ + 1, '\n');
    pending_blank_lines_ = 0;
    text_.append(line);
  }

  void end_document() {
    if (!text_.empty()) documents_.push_back(std::move(text_));
    text_.clear();
    pending_blank_lines_ = 0;
  }

 private:
  std::vector<std::string>& documents_;
  std::string text_;
  std::size_t pending_blank_lines_ = 0;
};

}  // namespace

DocumentRule parse_document_rule(std::string_view name) {
  if (name == "auto") return DocumentRule::automatic;
  if (name == "fortune") return DocumentRule::fortune;
  if (name == "paragraph") return DocumentRule::paragraph;
  if (name == "file") return DocumentRule::whole_file;
  throw UserError(fmt::format("unknown document rule \"{}\", expected auto, fortune, paragraph or file", name));
}

std::string_view document_rule_name(DocumentRule rule) {
  switch (rule) {
    case DocumentRule::automatic: return "auto";
    case DocumentRule::fortune: return "fortune";
    case DocumentRule::paragraph: return "paragraph";
    case DocumentRule::whole_file: return "file";
  }
  return "?";
}

DocumentRule resolve_document_rule(std::string_view text, DocumentRule rule) {
  if (rule != DocumentRule::automatic) return rule;
  bool has_separator = false;
  for_each_line(text, [&](std::string_view line) { has_separator = has_separator || is_fortune_separator(line); });
  return has_separator ? DocumentRule::fortune : DocumentRule::paragraph;
}

void split_documents(std::string_view text, DocumentRule rule, std::vector<std::string>& documents) {
  rule = resolve_document_rule(text, rule);
  DocumentBuilder builder(documents);
  for_each_line(text, [&](std::string_view line) {
    if (rule == DocumentRule::fortune && is_fortune_separator(line)) {
      builder.end_document();
    } else if (rule == DocumentRule::paragraph && is_blank(line)) {
      builder.end_document();
    } else {
      builder.add_line(line);
    }
  });
  builder.end_document();
}

}  // namespace zt::data
