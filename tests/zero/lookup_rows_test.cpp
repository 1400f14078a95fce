#include "zero/lookup_rows.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "models/gpt2.h"
#include "models/llama.h"

namespace zt {
namespace {

ZeroOptions bf16_options(int stage) {
  ZeroOptions o;
  o.stage = stage;
  o.compute_dtype = o.comm_dtype = DType::bf16;
  return o;
}

TEST(LookupRows, GPT2sTableAndRowsAreWhereItsBackwardAddsThem) {
  const models::GPT2Config c = models::GPT2Config::preset("tiny");
  const models::GPT2 gpt2(c);
  const auto rows = gpt2.block(0).lookup_rows();
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->width, static_cast<std::size_t>(c.n_embd));
  EXPECT_EQ(rows->token_table, 0u);
  ASSERT_TRUE(rows->position_table);
  EXPECT_EQ(*rows->position_table, static_cast<std::size_t>(c.padded_vocab_size) * c.n_embd);  // wpe after wte
  for (std::size_t b = 1; b < gpt2.num_blocks(); ++b) EXPECT_FALSE(gpt2.block(b).lookup_rows()) << b;
}

// GPT-2 124M (padded vocabulary 50304 x 768), bf16, 1 x 1024 tokens per rank: on 4 ranks a rank
// receives 3 x 1024 x (768 x 2 + 4) bytes of rows against 3/4 of the 77 MB table's reduce-scatter.
TEST(LookupRows, AutoTakesRowsWhereTheyAreFewerBytesThanTheTablesReduction) {
  const models::GPT2 gpt2(models::GPT2Config::preset("gpt2-124m"));
  const ZeroOptions o = bf16_options(2);
  EXPECT_DOUBLE_EQ(lookup_rows_bytes(gpt2, 0, o, 4, 1, 1024), 3.0 * 1024 * (768 * 2 + 4));
  const double padded = static_cast<double>((gpt2.block(0).param_count() + 3) / 4 * 4);
  EXPECT_DOUBLE_EQ(dense_reduction_bytes(gpt2, 0, o, 4), 0.75 * padded * 2);
  EXPECT_DOUBLE_EQ(dense_reduction_bytes(gpt2, 0, bf16_options(0), 4), 2 * 0.75 * padded * 2);  // all-reduce
  EXPECT_EQ(rows_exchanged_block(gpt2, o, 4, 1, 1024, Device::cpu()), 0u);
  // 16 x 1024 tokens on 8 ranks: 7 x 16384 rows are more than the table.
  EXPECT_EQ(rows_exchanged_block(gpt2, o, 8, 16, 1024, Device::cpu()), std::nullopt);
  ZeroOptions forced = o;
  forced.embedding_gradient = EmbeddingGradient::rows;
  EXPECT_EQ(rows_exchanged_block(gpt2, forced, 8, 16, 1024, Device::cpu()), 0u);
  EXPECT_EQ(lookup_rows_buffer_bytes(gpt2, 0, forced, 8, 16, 1024), 8u * 16 * 1024 * (4 + 768 * 2));
  ZeroOptions dense = o;
  dense.embedding_gradient = EmbeddingGradient::dense;
  EXPECT_EQ(rows_exchanged_block(gpt2, dense, 4, 1, 1024, Device::cpu()), std::nullopt);
  EXPECT_EQ(rows_exchanged_block(gpt2, forced, 1, 1, 1024, Device::cpu()), std::nullopt) << "nothing to exchange";
}

TEST(LookupRows, OnlyATiedEmbeddingOnACpuDevice) {
  const models::GPT2 gpt2(models::GPT2Config::preset("gpt2-124m"));
  ZeroOptions o = bf16_options(2);
  EXPECT_EQ(rows_exchanged_block(gpt2, o, 4, 1, 1024, Device::cuda(0)), std::nullopt);
  o.embedding_gradient = EmbeddingGradient::rows;
  EXPECT_THROW(rows_exchanged_block(gpt2, o, 4, 1, 1024, Device::cuda(0)), std::invalid_argument);
  models::LlamaConfig untied;
  untied.n_layer = 1, untied.n_head = 2, untied.n_kv_head = 2, untied.n_embd = 8, untied.intermediate_size = 8,
  untied.vocab_size = 1000, untied.block_size = 4;
  untied.tie_embeddings = false;
  const models::Llama llama(untied);
  ASSERT_TRUE(llama.block(0).lookup_rows());
  EXPECT_EQ(rows_exchanged_block(llama, o, 4, 1, 4, Device::cpu()), std::nullopt) << "no block is tied to it";
  models::LlamaConfig tied = untied;
  tied.tie_embeddings = true;
  EXPECT_EQ(rows_exchanged_block(models::Llama(tied), o, 4, 1, 4, Device::cpu()), 0u);
}

}  // namespace
}  // namespace zt
