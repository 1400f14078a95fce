#include "zero/first_rows.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace zt {
namespace {

// A GPT-2-like block: a table of 10 token rows of width 4, then 3 position rows.
const models::LookupRows kRows{.width = 4, .token_table = 0, .position_table = 40};
constexpr std::size_t kBlockNumel = 52;

TEST(FirstRows, TheRowsALookupReadsSortedOnceEach) {
  const std::vector<std::int32_t> tokens{7, 2, 7, 9, 2, 0};  // two sequences of T = 3
  const RowsRead read = rows_read(kRows, tokens, 3, kBlockNumel);
  EXPECT_EQ(read.width, 4u);
  EXPECT_EQ(read.starts, (std::vector<std::size_t>{0, 8, 28, 36, 40, 44, 48}));
  // Elements of those rows in [6, 30): row 8's four and row 28's first two.
  EXPECT_EQ(read.elements_in(6, 30), 4u + 2u);
  EXPECT_EQ(read.elements_in(0, kBlockNumel), 7u * 4u);
  // Chunks of 13: [0, 13) holds rows 0 and 8 (8 elements), [13, 26) none, [26, 39) row 28 and
  // row 36's first 3 (7), [39, 52) row 36's last, and the position rows (13): the largest part.
  EXPECT_EQ(rows_part_numel(read, 13, 4), 13u);
  const models::LookupRows untied{.width = 4, .token_table = 0, .position_table = std::nullopt};
  EXPECT_EQ(rows_read(untied, tokens, 3, 40).starts, (std::vector<std::size_t>{0, 8, 28, 36}));
}

TEST(FirstRows, RefusesTokensOutsideTheTableAndPartSequences) {
  EXPECT_THROW(rows_read(kRows, std::vector<std::int32_t>{1, 10, 2}, 3, kBlockNumel), std::invalid_argument);
  EXPECT_THROW(rows_read(kRows, std::vector<std::int32_t>{1, -1, 2}, 3, kBlockNumel), std::invalid_argument);
  EXPECT_THROW(rows_read(kRows, std::vector<std::int32_t>{1, 2}, 3, kBlockNumel), std::invalid_argument);
}

// Every rank packs its chunk's part, the parts go side by side (padded to the largest), and
// placing them puts exactly the rows' elements where they were, rows cut by a chunk boundary too;
// the rest of the block is left as it was. In 4-byte and 2-byte elements.
template <typename Element>
void round_trip(const char* what) {
  SCOPED_TRACE(what);
  const std::vector<std::int32_t> tokens{7, 2, 7, 9, 2, 0, 5, 5, 3};  // T = 3
  const RowsRead read = rows_read(kRows, tokens, 3, kBlockNumel);
  for (std::size_t chunk : {std::size_t{13}, std::size_t{26}, std::size_t{52}, std::size_t{7}}) {
    SCOPED_TRACE(chunk);
    const int ranks = static_cast<int>((kBlockNumel + chunk - 1) / chunk);
    std::vector<Element> block(static_cast<std::size_t>(ranks) * chunk, Element{});
    for (std::size_t e = 0; e < kBlockNumel; ++e) block[e] = static_cast<Element>(e + 1);
    const std::size_t stride = rows_part_numel(read, chunk, ranks);
    std::vector<Element> parts(stride * static_cast<std::size_t>(ranks), Element{});
    for (int r = 0; r < ranks; ++r) {
      const std::size_t lo = static_cast<std::size_t>(r) * chunk;
      EXPECT_EQ(pack_rows(read, lo, lo + chunk, block.data() + lo, parts.data() + static_cast<std::size_t>(r) * stride,
                          sizeof(Element)),
                read.elements_in(lo, lo + chunk));
    }
    std::vector<Element> placed(block.size(), static_cast<Element>(999));
    place_rows(read, chunk, ranks, parts.data(), stride, placed.data(), sizeof(Element));
    for (std::size_t e = 0; e < kBlockNumel; ++e) {
      bool in_a_row = false;
      for (std::size_t start : read.starts) in_a_row = in_a_row || (e >= start && e < start + read.width);
      EXPECT_EQ(placed[e], in_a_row ? block[e] : static_cast<Element>(999)) << "element " << e;
    }
  }
}

TEST(FirstRows, PackedPartsPlacedGiveTheRowsBack) {
  round_trip<float>("f32");
  round_trip<std::uint16_t>("16-bit");
}

}  // namespace
}  // namespace zt
