#include "core/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace zt {
namespace {

std::uint32_t bits_of(float value) { return std::bit_cast<std::uint32_t>(value); }
float float_of(std::uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::f16), 2u);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp16"), DType::f16);
  EXPECT_EQ(parse_dtype(dtype_name(DType::f32)), DType::f32);
  EXPECT_THROW(parse_dtype("f64"), std::invalid_argument);
}

// Token ids and targets are i32: copied bit for bit, never converted to or from a float type.
TEST(DType, IntegersAreCopiedNeverConverted) {
  EXPECT_EQ(dtype_size(DType::i32), 4u);
  EXPECT_EQ(dtype_name(DType::i32), "i32");
  EXPECT_EQ(dtype_of<std::int32_t>(), DType::i32);
  const std::vector<std::int32_t> ids = {0, 50256, -1, 16777217};  // 2^24 + 1: not a float
  std::vector<std::int32_t> copy(ids.size());
  convert_host(ids.data(), DType::i32, copy.data(), DType::i32, ids.size());
  EXPECT_EQ(copy, ids);
  std::vector<float> floats(ids.size());
  EXPECT_THROW(convert_host(ids.data(), DType::i32, floats.data(), DType::f32, ids.size()), std::invalid_argument);
  EXPECT_THROW(convert_host(floats.data(), DType::f32, copy.data(), DType::i32, ids.size()), std::invalid_argument);
}

// Every one of the 65536 bf16 patterns converts to f32 and back to itself (NaNs stay NaN).
TEST(DType, Bf16RoundTripsAllPatternsExactly) {
  for (std::uint32_t pattern = 0; pattern <= 0xffff; ++pattern) {
    bf16 in{static_cast<std::uint16_t>(pattern)};
    float wide = bf16_to_float(in);
    EXPECT_EQ(bits_of(wide), pattern << 16) << "pattern " << pattern;
    bf16 back = float_to_bf16(wide);
    if (std::isnan(wide)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(back))) << "pattern " << pattern;
    } else {
      ASSERT_EQ(back.bits, pattern) << "pattern " << pattern;
    }
  }
}

TEST(DType, F16RoundTripsAllPatternsExactly) {
  for (std::uint32_t pattern = 0; pattern <= 0xffff; ++pattern) {
    f16 in{static_cast<std::uint16_t>(pattern)};
    float wide = f16_to_float(in);
    f16 back = float_to_f16(wide);
    if (std::isnan(wide)) {
      EXPECT_TRUE(std::isnan(f16_to_float(back))) << "pattern " << pattern;
    } else {
      ASSERT_EQ(back.bits, pattern) << "pattern " << pattern;
    }
  }
}

TEST(DType, F16DecodesKnownValues) {
  EXPECT_EQ(f16_to_float(f16{0x3c00}), 1.0f);
  EXPECT_EQ(f16_to_float(f16{0xc000}), -2.0f);
  EXPECT_EQ(f16_to_float(f16{0x7bff}), 65504.0f);
  EXPECT_EQ(f16_to_float(f16{0x0001}), 0x1p-24f);
  EXPECT_EQ(f16_to_float(f16{0x0400}), 0x1p-14f);
  EXPECT_TRUE(std::isinf(f16_to_float(f16{0x7c00})));
}

// Halfway cases go to the even neighbour; anything past halfway goes up.
TEST(DType, Bf16RoundsToNearestEven) {
  // 1.0 = 0x3f800000; bf16 keeps the top 16 bits. Halfway between 0x3f80 and 0x3f81 is 0x3f808000.
  EXPECT_EQ(float_to_bf16(float_of(0x3f808000u)).bits, 0x3f80);  // tie, 0x3f80 is even
  EXPECT_EQ(float_to_bf16(float_of(0x3f818000u)).bits, 0x3f82);  // tie, 0x3f81 is odd: up
  EXPECT_EQ(float_to_bf16(float_of(0x3f808001u)).bits, 0x3f81);  // just past halfway
  EXPECT_EQ(float_to_bf16(float_of(0x3f807fffu)).bits, 0x3f80);  // just below halfway
  EXPECT_EQ(float_to_bf16(float_of(0xbf808001u)).bits, 0xbf81);  // sign is symmetric
  // The largest finite float rounds up to infinity, as the hardware does.
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()).bits, 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits only in the low bits must not truncate to infinity.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(float_of(0x7f800001u)))));
}

// Checks float_to_f16 against a slow, obviously right rounding: pick the nearer of the two
// neighbouring f16 values, ties to the even pattern.
TEST(DType, F16RoundsToNearestEvenAgainstBruteForce) {
  std::vector<float> finite_f16;
  std::vector<std::uint16_t> patterns;
  for (std::uint32_t p = 0; p < 0x7c00; ++p) {  // all non-negative finite f16 in increasing order
    finite_f16.push_back(f16_to_float(f16{static_cast<std::uint16_t>(p)}));
    patterns.push_back(static_cast<std::uint16_t>(p));
  }
  auto reference = [&](float x) -> std::uint16_t {
    auto it = std::lower_bound(finite_f16.begin(), finite_f16.end(), x);
    if (it == finite_f16.end()) return x >= 65520.0f ? 0x7c00 : 0x7bff;
    std::size_t hi = static_cast<std::size_t>(it - finite_f16.begin());
    if (*it == x || hi == 0) return patterns[hi];
    double below = finite_f16[hi - 1], above = finite_f16[hi];
    double d_below = x - below, d_above = above - x;
    if (d_below < d_above) return patterns[hi - 1];
    if (d_above < d_below) return patterns[hi];
    return (patterns[hi] & 1) ? patterns[hi - 1] : patterns[hi];
  };
  // Sweep floats across the whole f16 range, including subnormals and the overflow edge, with a
  // stride that lands on halfway points and their neighbours.
  for (std::uint32_t bits = 0x33000000u; bits < 0x47800000u; bits += 0x1001u) {
    float x = float_of(bits);
    ASSERT_EQ(float_to_f16(x).bits, reference(x)) << "x = " << x;
    ASSERT_EQ(float_to_f16(-x).bits, reference(x) | 0x8000) << "x = " << -x;
  }
  EXPECT_EQ(float_to_f16(65519.0f).bits, 0x7bff);
  EXPECT_EQ(float_to_f16(65520.0f).bits, 0x7c00);
  EXPECT_EQ(float_to_f16(0x1p-25f).bits, 0x0000);          // tie with zero: even
  EXPECT_EQ(float_to_f16(0x1.8p-24f).bits, 0x0002);        // tie between 1 and 2 subnormal units: even
  EXPECT_EQ(float_to_f16(0x1.000002p-25f).bits, 0x0001);   // past halfway
}

TEST(DType, ConvertHostBetweenAllPairs) {
  const std::vector<float> values = {0.0f, 1.0f, -2.5f, 3.140625f, 1024.0f};
  std::vector<bf16> as_bf16(values.size());
  std::vector<f16> as_f16(values.size());
  std::vector<float> back(values.size());
  convert_host(values.data(), DType::f32, as_bf16.data(), DType::bf16, values.size());
  convert_host(as_bf16.data(), DType::bf16, as_f16.data(), DType::f16, values.size());
  convert_host(as_f16.data(), DType::f16, back.data(), DType::f32, values.size());
  EXPECT_EQ(back, values);  // all values are exact in both 16-bit types
}

// convert_host's bulk loops (vectorized, F16C for f16) against the one-value conversions, bit for
// bit: every 16-bit pattern widened, and f32 patterns that cover every exponent with mantissas at,
// around and between the rounding boundaries, NaNs and infinities, narrowed. The odd length leaves
// a tail after the vector loops.
TEST(DType, BulkConversionsMatchTheOneValueConversionsBitForBit) {
  std::vector<std::uint16_t> patterns(65536 + 3);
  for (std::size_t i = 0; i < patterns.size(); ++i) patterns[i] = static_cast<std::uint16_t>(i);
  std::vector<float> widened(patterns.size());
  convert_host(patterns.data(), DType::bf16, widened.data(), DType::f32, patterns.size());
  for (std::size_t i = 0; i < patterns.size(); ++i)
    ASSERT_EQ(bits_of(widened[i]), bits_of(bf16_to_float(bf16{patterns[i]}))) << "bf16 " << patterns[i];
  convert_host(patterns.data(), DType::f16, widened.data(), DType::f32, patterns.size());
  for (std::size_t i = 0; i < patterns.size(); ++i)
    ASSERT_EQ(bits_of(widened[i]), bits_of(f16_to_float(f16{patterns[i]}))) << "f16 " << patterns[i];

  std::vector<float> values;
  for (std::uint32_t sign_exponent = 0; sign_exponent < 512; ++sign_exponent)
    for (std::uint32_t mantissa : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x2000u, 0x7fffu, 0x8000u, 0x8001u, 0x18000u,
                                   0x3ff000u, 0x400000u, 0x7fe000u, 0x7fefffu, 0x7ff000u, 0x7fffffu, 0x123457u})
      values.push_back(float_of((sign_exponent << 23) | mantissa));
  values.push_back(0.1f);
  std::vector<bf16> as_bf16(values.size());
  std::vector<f16> as_f16(values.size());
  convert_host(values.data(), DType::f32, as_bf16.data(), DType::bf16, values.size());
  convert_host(values.data(), DType::f32, as_f16.data(), DType::f16, values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(as_bf16[i].bits, float_to_bf16(values[i]).bits) << "f32 bits " << std::hex << bits_of(values[i]);
    ASSERT_EQ(as_f16[i].bits, float_to_f16(values[i]).bits) << "f32 bits " << std::hex << bits_of(values[i]);
  }
  std::vector<f16> bf16_to_f16(values.size());
  convert_host(as_bf16.data(), DType::bf16, bf16_to_f16.data(), DType::f16, values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(bf16_to_f16[i].bits, float_to_f16(bf16_to_float(as_bf16[i])).bits) << i;
}

}  // namespace
}  // namespace zt
