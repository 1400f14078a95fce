// The vectorized host loops give, element for element, the bits of a plain scalar loop: lengths
// that leave tails for every vector width, 16-bit inputs, and values that round (sums of numbers
// of different scales, non-power-of-two divisors), infinities and NaNs.
#include "core/host_arith.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/dtype.h"

namespace zt {
namespace {

std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<float> v(n);
  for (float& x : v) x = std::ldexp(mantissa(rng), exponent(rng));
  if (n > 3) {
    v[0] = std::numeric_limits<float>::infinity();
    v[1] = std::numeric_limits<float>::quiet_NaN();
    v[2] = -0.0f;
  }
  return v;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i])) << "element " << i;
}

constexpr std::size_t kLengths[] = {0, 1, 7, 15, 16, 17, 33, 1023, 1024, 1025, 3000};

TEST(HostArith, AddIntoIsTheScalarSum) {
  for (std::size_t n : kLengths) {
    std::vector<float> acc = values(n, 1), x = values(n, 2), want = acc;
    for (std::size_t i = 0; i < n; ++i) want[i] += x[i];
    add_into(acc.data(), x.data(), n);
    expect_same_bits(acc, want);
  }
}

TEST(HostArith, AccumulateIntoWidensEach16BitValueThenAdds) {
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    for (std::size_t n : kLengths) {
      std::vector<float> acc = values(n, 3), source = values(n, 4);
      std::vector<std::uint16_t> narrow(n);
      const void* x = source.data();
      if (dtype != DType::f32) {
        convert_host(source.data(), DType::f32, narrow.data(), dtype, n);
        x = narrow.data();
      }
      std::vector<float> want = acc;
      for (std::size_t i = 0; i < n; ++i)
        want[i] += dtype == DType::f32    ? source[i]
                   : dtype == DType::bf16 ? bf16_to_float(bf16{narrow[i]})
                                          : f16_to_float(f16{narrow[i]});
      accumulate_into(acc.data(), x, dtype, n);
      expect_same_bits(acc, want);
    }
  }
}

TEST(HostArith, AccumulateIntoRefusesIntegers) {
  float acc = 0.0f;
  std::int32_t x = 1;
  EXPECT_THROW(accumulate_into(&acc, &x, DType::i32, 1), std::invalid_argument);
}

TEST(HostArith, AddRounded16BitRoundsTheFp32SumOnce) {
  for (DType dtype : {DType::bf16, DType::f16}) {
    auto to_float = [dtype](std::uint16_t v) { return dtype == DType::bf16 ? bf16_to_float(bf16{v}) : f16_to_float(f16{v}); };
    auto to_bits = [dtype](float v) { return dtype == DType::bf16 ? float_to_bf16(v).bits : float_to_f16(v).bits; };
    for (std::size_t n : kLengths) {
      const std::vector<float> a = values(n, 7), b = values(n, 8);  // 2^-20..2^20: f16 overflows, goes subnormal
      std::vector<std::uint16_t> acc(n), x(n);
      for (std::size_t i = 0; i < n; ++i) {
        acc[i] = to_bits(a[i]);
        x[i] = to_bits(b[i]);
      }
      std::vector<std::uint16_t> want(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = to_bits(to_float(acc[i]) + to_float(x[i]));
      add_rounded_16bit(acc.data(), x.data(), dtype, n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(acc[i], want[i]) << dtype_name(dtype) << " element " << i;
    }
  }
  std::uint16_t a = 0, b = 0;
  EXPECT_THROW(add_rounded_16bit(&a, &b, DType::f32, 1), std::invalid_argument);
}

TEST(HostArith, DivideByDividesRatherThanMultiplyingByTheInverse) {
  for (float divisor : {3.0f, 4.0f, 7.0f}) {
    for (std::size_t n : kLengths) {
      std::vector<float> x = values(n, 5), want = x;
      for (float& w : want) w /= divisor;
      divide_by(x.data(), divisor, n);
      expect_same_bits(x, want);
    }
  }
  // 1/3 rounded, then multiplied, differs from the division for some values: the test sees it.
  std::vector<float> x = values(3000, 6);
  std::size_t differ = 0;
  for (float v : x) differ += std::bit_cast<std::uint32_t>(v / 3.0f) != std::bit_cast<std::uint32_t>(v * (1.0f / 3.0f));
  EXPECT_GT(differ, 0u);
}

}  // namespace
}  // namespace zt
