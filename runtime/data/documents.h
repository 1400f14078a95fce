// Cutting input text files into documents; each document is preceded by the end-of-text token in
// the token stream, and the train/validation split assigns whole documents.
//
// Rules (a file is read as lines; a "\r\n" line end counts as "\n"):
//   fortune    a line holding just "%" ends an entry, as in the `fortune` program's files
//              (/usr/share/games/fortunes/*); each entry is a document.
//   paragraph  one or more blank (empty or whitespace-only) lines end a paragraph; each paragraph
//              is a document.
//   file       the whole file is one document.
//   auto       (default) fortune if the file has a line holding just "%", paragraph otherwise.
// A document is its lines joined by "\n", without blank lines at its start or end and without a
// final newline; documents left empty are dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zt::data {

enum class DocumentRule { automatic, fortune, paragraph, whole_file };

// "auto", "fortune", "paragraph", "file"; throws zt::UserError on anything else.
DocumentRule parse_document_rule(std::string_view name);
std::string_view document_rule_name(DocumentRule rule);

// The rule `rule` stands for on this text: `automatic` resolves to fortune or paragraph.
DocumentRule resolve_document_rule(std::string_view text, DocumentRule rule);

// Appends the documents of one file's text, in order.
void split_documents(std::string_view text, DocumentRule rule, std::vector<std::string>& documents);

}  // namespace zt::data
