// Cutting text into documents: fortune entries, paragraphs, whole files.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/data/documents.h"
#include "tests/runtime/data/temp_dir.h"

namespace zt::data {
namespace {

std::vector<std::string> split(std::string_view text, DocumentRule rule) {
  std::vector<std::string> documents;
  split_documents(text, rule, documents);
  return documents;
}

TEST(Documents, FortuneEntriesAreSeparatedByPercentLines) {
  const std::string text = "First.\n%\nSecond line one.\n\nSecond line three.\n%\n%\n  \nThird.\n  -- Someone\n%\n";
  EXPECT_EQ(split(text, DocumentRule::fortune),
            (std::vector<std::string>{"First.", "Second line one.\n\nSecond line three.", "Third.\n  -- Someone"}));
  EXPECT_EQ(resolve_document_rule(text, DocumentRule::automatic), DocumentRule::fortune);
}

TEST(Documents, ParagraphsAreSeparatedByBlankLines) {
  const std::string text = "\n\nOne a\none b\r\n \t\nTwo\n\n\n\nThree 100% sure";
  EXPECT_EQ(split(text, DocumentRule::paragraph), (std::vector<std::string>{"One a\none b", "Two", "Three 100% sure"}));
  EXPECT_EQ(resolve_document_rule(text, DocumentRule::automatic), DocumentRule::paragraph);
  EXPECT_EQ(split(text, DocumentRule::automatic), split(text, DocumentRule::paragraph));
}

TEST(Documents, WholeFileIsOneDocument) {
  EXPECT_EQ(split("\nA\n\nB\n%\nC\n\n", DocumentRule::whole_file), (std::vector<std::string>{"A\n\nB\n%\nC"}));
  EXPECT_EQ(split(" \n\n", DocumentRule::whole_file), (std::vector<std::string>{}));
}

TEST(Documents, RuleNames) {
  for (const auto rule : {DocumentRule::automatic, DocumentRule::fortune, DocumentRule::paragraph, DocumentRule::whole_file}) {
    EXPECT_EQ(parse_document_rule(document_rule_name(rule)), rule);
  }
  EXPECT_USER_ERROR(parse_document_rule("lines"), "unknown document rule \"lines\"");
}

}  // namespace
}  // namespace zt::data
