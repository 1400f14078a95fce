// The linear layer on the GPU (mirrors linear.cpp): cuBLAS products with fp32 accumulation
// (models/cuda/gemm.h), the forward's bias fused into the product as cuBLASLt's epilogue where it
// applies, the shared bias kernels otherwise and for the bias gradient.
#include "models/ops/linear.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/gemm.h"
#include "models/cuda/shared_kernels.h"

namespace zt::models::ops::on_cuda {

void linear_forward(ComputeContext& ctx, BufferView out, BufferView inp, BufferView weight, BufferView bias, int N,
                    int IC, int OC, int ldo) {
  CudaComputeContext& c = as_cuda(ctx);
  // out (N, OC) = inp (N, IC) weight^T (IC, OC)
  cuda::GemmArgs g;
  g.trans_b = true;
  g.M = N, g.N = OC, g.K = IC;
  g.A = inp.data, g.lda = IC, g.B = weight.data, g.ldb = IC, g.C = out.data, g.ldc = ldo;
  if (bias.numel > 0 && cuda::gemm_with_epilogue(c, g, {cuda::GemmEpilogue::Kind::bias, bias.data})) return;
  cuda::gemm(c, g);
  if (bias.numel > 0) cuda::bias_forward(out.data, bias.data, N, OC, ldo, c.dtype(), c.handle());
}

void linear_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                     BufferView inp, BufferView weight, int N, int IC, int OC, int ldo) {
  CudaComputeContext& c = as_cuda(ctx);
  if (dinp.numel > 0) {  // dinp (N, IC) = dout (N, OC) weight (OC, IC)
    cuda::GemmArgs g;
    g.M = N, g.N = IC, g.K = OC;
    g.A = dout.data, g.lda = ldo, g.B = weight.data, g.ldb = IC, g.C = dinp.data, g.ldc = IC;
    cuda::gemm(c, g);
  }
  if (dweight.numel > 0) {  // dweight (OC, IC) += dout^T (OC, N) inp (N, IC)
    cuda::GemmArgs g;
    g.trans_a = true;
    g.M = OC, g.N = IC, g.K = N;
    g.beta = 1.0f;
    g.A = dout.data, g.lda = ldo, g.B = inp.data, g.ldb = IC, g.C = dweight.data, g.ldc = IC;
    cuda::gemm(c, g);
  }
  if (dbias.numel > 0)
    cuda::bias_backward(dbias.data, dout.data, c.reduction_scratch(cuda::column_sum_scratch_floats(N, OC)), N, OC, ldo,
                        c.dtype(), c.handle());
}

}  // namespace zt::models::ops::on_cuda
