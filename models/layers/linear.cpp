#include "models/layers/linear.h"

#include <cblas.h>

#include <cstddef>

namespace zt::models::cpu {

void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int IC, int OC,
                    int ldo) {
  if (bias) {
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) out[static_cast<std::size_t>(n) * ldo + o] = bias[o];
  }
  // out (N, OC) = inp (N, IC) * weight^T (IC, OC) [+ out]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC, 1.0f, inp, IC, weight, IC, bias ? 1.0f : 0.0f, out,
              ldo);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int IC, int OC, int ldo) {
  if (dinp)  // dinp (N, IC) = dout (N, OC) * weight (OC, IC)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0f, dout, ldo, weight, IC, 0.0f, dinp, IC);
  // dweight (OC, IC) += dout^T (OC, N) * inp (N, IC)
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N, 1.0f, dout, ldo, inp, IC, 1.0f, dweight, IC);
  if (dbias)
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) dbias[o] += dout[static_cast<std::size_t>(n) * ldo + o];
}

void set_compute_threads(int threads) {
  threads = threads < 1 ? 1 : threads;
  openblas_set_num_threads(threads);
}
int blas_threads() { return openblas_get_num_threads(); }

}  // namespace zt::models::cpu
