// Central-difference gradient checking for the fp32 CPU reference.
//
// The objective is L = sum_i out_i * r_i with fixed random r (so every output element matters),
// summed in double. With fp32 forwards, central differences with step h have truncation error
// O(h^2 |f'''|) and rounding error about sqrt(n) * 6e-8 * |out| / h; h = 1e-2 balances them for
// the O(1) values used here to about 1e-4 absolute, so a tolerance of 2e-3 * max(1, |g|) leaves
// margin while still catching any wrong term (those are O(0.1) or larger). Whole-model checks use
// their own step and tolerances (model_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace zt::models::test {

inline std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);  // values only need to be "random", not portable
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline double weighted_sum(const float* out, const std::vector<float>& r) {
  double s = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) s += static_cast<double>(out[i]) * r[i];
  return s;
}

inline constexpr float kGradcheckStep = 1e-2f;
inline constexpr double kGradcheckTol = 2e-3;

// Compares analytic[i] with the central difference of objective() in x[i] for every i.
inline void expect_gradient(const std::string& what, std::vector<float>& x, const std::vector<float>& analytic,
                            const std::function<double()>& objective, float step = kGradcheckStep,
                            double rtol = kGradcheckTol, double atol = kGradcheckTol,
                            std::vector<float>* numeric_out = nullptr) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    float saved = x[i];
    x[i] = saved + step;
    double plus = objective();
    x[i] = saved - step;
    double minus = objective();
    x[i] = saved;
    double numeric = (plus - minus) / (2.0 * step);
    if (numeric_out) numeric_out->push_back(static_cast<float>(numeric));
    double err = std::abs(numeric - analytic[i]);
    worst = std::max(worst, err / (atol + rtol * std::abs(numeric)));
    EXPECT_LE(err, atol + rtol * std::abs(numeric)) << what << "[" << i << "]: analytic " << analytic[i] << " numeric " << numeric;
  }
  // worst: the largest error as a fraction of its tolerance (1 = at the limit).
  ::testing::Test::RecordProperty(what + "_worst_fraction_of_tolerance", std::to_string(worst));
}

}  // namespace zt::models::test
