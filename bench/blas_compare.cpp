// The sgemm rate of several BLAS libraries on the products one GPT-2 training step makes, side by
// side in one process: which library serves zerotrain's CPU path best on this machine.
//
//   blas_compare N_TOKENS C ROUNDS LIB[=SYMBOL_PREFIX] ...
//
// Each LIB is a shared library opened with dlopen; its cblas_sgemm is looked up as
// SYMBOL_PREFIX + "cblas_sgemm" (the OpenBLAS wheels on PyPI prefix their symbols, "scipy_").
// Every round times, for every library in turn, the products of one transformer block's forward
// and backward as zerotrain's Linear layer issues them (row-major; forward C = A B^T, input
// gradient C = A B, weight gradient C += A^T B), each library on the same buffers. Printed: per
// library and per layout, the median over rounds of GFLOP/s. Single-threaded: the libraries are
// asked for one thread through their usual environment variables (set them before running).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

enum Order { kRowMajor = 101 };
enum Transpose { kNoTrans = 111, kTrans = 112 };
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);

struct Product {
  const char* layout;  // "fwd" (A B^T), "dinp" (A B), "dweight" (A^T B, accumulated)
  int m, n, k;
};

// One block's Linear products for `tokens` rows of width c: qkv (c -> 3c), attention projection
// (c -> c), MLP up (c -> 4c), MLP down (4c -> c).
std::vector<Product> block_products(int tokens, int c) {
  std::vector<Product> out;
  const int shapes[4][2] = {{c, 3 * c}, {c, c}, {c, 4 * c}, {4 * c, c}};  // {in, out}
  for (const auto& s : shapes) {
    const int in = s[0], outc = s[1];
    out.push_back({"fwd", tokens, outc, in});
    out.push_back({"dinp", tokens, in, outc});
    out.push_back({"dweight", outc, in, tokens});
  }
  return out;
}

double run_product(Sgemm sgemm, const Product& p, std::vector<float>& a, std::vector<float>& b,
                   std::vector<float>& c) {
  const auto start = std::chrono::steady_clock::now();
  const std::string layout = p.layout;
  if (layout == "fwd")  // C (m, n) = A (m, k) B^T, B stored (n, k)
    sgemm(kRowMajor, kNoTrans, kTrans, p.m, p.n, p.k, 1.0f, a.data(), p.k, b.data(), p.k, 0.0f, c.data(), p.n);
  else if (layout == "dinp")  // C (m, n) = A (m, k) B (k, n)
    sgemm(kRowMajor, kNoTrans, kNoTrans, p.m, p.n, p.k, 1.0f, a.data(), p.k, b.data(), p.n, 0.0f, c.data(), p.n);
  else  // C (m, n) += A^T B, A stored (k, m)
    sgemm(kRowMajor, kTrans, kNoTrans, p.m, p.n, p.k, 1.0f, a.data(), p.m, b.data(), p.n, 1.0f, c.data(), p.n);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s N_TOKENS C ROUNDS LIB[=SYMBOL_PREFIX] ...\n", argv[0]);
    return 2;
  }
  const int tokens = std::atoi(argv[1]), c = std::atoi(argv[2]), rounds = std::atoi(argv[3]);
  if (tokens < 1 || c < 1 || rounds < 1) {
    std::fprintf(stderr, "N_TOKENS, C and ROUNDS must be positive integers\n");
    return 2;
  }
  std::vector<std::string> names;
  std::vector<Sgemm> libs;
  for (int i = 4; i < argc; ++i) {
    std::string spec = argv[i], prefix;
    if (auto eq = spec.find('='); eq != std::string::npos) {
      prefix = spec.substr(eq + 1);
      spec.resize(eq);
    }
    void* handle = dlopen(spec.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      std::fprintf(stderr, "cannot open %s: %s\n", spec.c_str(), dlerror());
      return 1;
    }
    auto* fn = reinterpret_cast<Sgemm>(dlsym(handle, (prefix + "cblas_sgemm").c_str()));
    if (!fn) {
      std::fprintf(stderr, "%s has no %scblas_sgemm\n", spec.c_str(), prefix.c_str());
      return 1;
    }
    names.push_back(spec.substr(spec.rfind('/') + 1));
    libs.push_back(fn);
  }
  const std::vector<Product> products = block_products(tokens, c);
  std::size_t largest = 0;
  for (const Product& p : products)
    largest = std::max({largest, static_cast<std::size_t>(p.m) * p.k, static_cast<std::size_t>(p.k) * p.n,
                        static_cast<std::size_t>(p.m) * p.n});
  std::vector<float> a(largest), b(largest), out(largest);
  for (std::size_t i = 0; i < largest; ++i) {
    a[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    b[i] = static_cast<float>((i * 104729) % 1000) / 1000.0f - 0.5f;
  }
  const char* layouts[] = {"fwd", "dinp", "dweight"};
  // rates[lib][layout] = one GFLOP/s figure per round
  std::vector<std::vector<std::vector<double>>> rates(libs.size(), std::vector<std::vector<double>>(3));
  for (int round = -1; round < rounds; ++round) {  // round -1 warms every library up
    for (std::size_t l = 0; l < libs.size(); ++l) {
      for (int lay = 0; lay < 3; ++lay) {
        double flops = 0, seconds = 0;
        for (const Product& p : products) {
          if (std::string(p.layout) != layouts[lay]) continue;
          for (int rep = 0; rep < 3; ++rep) {
            seconds += run_product(libs[l], p, a, b, out);
            flops += 2.0 * p.m * p.n * p.k;
          }
        }
        if (round >= 0) rates[l][lay].push_back(flops / seconds / 1e9);
      }
    }
  }
  std::printf("tokens %d, width %d, %d rounds; GFLOP/s, median over rounds\n", tokens, c, rounds);
  std::printf("%-28s %9s %9s %9s\n", "library", "fwd", "dinp", "dweight");
  for (std::size_t l = 0; l < libs.size(); ++l) {
    std::printf("%-28s", names[l].c_str());
    for (auto& r : rates[l]) {
      std::sort(r.begin(), r.end());
      std::printf(" %9.1f", r[r.size() / 2]);
    }
    std::printf("\n");
  }
  return 0;
}
