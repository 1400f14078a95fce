// CUDA kernels against the CPU ops, on fresh random inputs, in fp32, bf16 and f16 storage. The CPU
// side runs in the same storage dtype: its 16-bit ops keep the CUDA kernels' contract (16-bit
// storage, fp32 inside, one rounding when a result is stored; tests/models/sixteen_bit_kernels_test
// holds them to the fp32 code), so a 16-bit comparison compares like with like and only the order
// of fp32 sums and the rounding it tips differ.
// Error measure: ||gpu - cpu|| / ||cpu|| over the whole output (the device METHOD.md's rule):
// fp32 under 1e-4 (strict fp32 GEMMs, only the summation order differs), 16-bit under 1e-2 for one
// kernel (an element whose fp32 results straddle a rounding boundary differs by one 16-bit ulp),
// looser where chains of 16-bit roundings add up (whole model). f16 is held to the bf16 bounds: it
// has more mantissa and these values stay far from its range limits.
// Outputs are poisoned with NaN before each run, so an unwritten element fails. Skips with a
// visible reason when no GPU is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "models/activations.h"
#include "models/gpt2.h"
#include "models/cuda/flash_attention_rules.h"
#include "models/ops/attention.h"
#include "models/ops/embedding.h"
#include "models/ops/gelu.h"
#include "models/ops/gqa_attention.h"
#include "models/ops/layernorm.h"
#include "models/ops/residual.h"
#include "models/ops/rmsnorm.h"
#include "models/ops/rope.h"
#include "models/llama.h"
#include "models/model_state.h"
#include "models/ops/linear.h"
#include "core/error.h"
#include "core/device.h"
#include "models/ops/softmax_xent.h"
#include "models/ops/swiglu.h"
#include "models/ops/token_embedding.h"
#include "tests/support/gpu_skip.h"
#if ZT_HAVE_CUDA
#include <cuda_runtime.h>

#include "models/cuda/cuda_context.h"
#endif

namespace zt::models::test {
namespace {

#if ZT_HAVE_CUDA

void upload(const Buffer& dst, const void* src) { ASSERT_EQ(cudaMemcpy(dst.data(), src, dst.bytes(), cudaMemcpyHostToDevice), cudaSuccess); }

class CudaVsCpu : public ::testing::TestWithParam<DType> {
 protected:
  struct Pair {
    Buffer c, g;  // CPU and GPU, both in the compute dtype (f32 for statistics, i32 for integers)
  };

  void SetUp() override {
    ZT_SKIP_WITHOUT_CUDA_DEVICE();
    dt_ = GetParam();
    gpu_ = ComputeContext::cuda(0, dt_, {.allow_tf32 = false});  // compared with the fp32 CPU reference
    cpu_ = ComputeContext::cpu(1, dt_);
    rng_.seed(std::random_device{}());  // fresh inputs every run (METHOD.md); printed on failure
    seed_ = rng_();
    rng_.seed(seed_);
  }

  std::vector<float> random(std::size_t n, float scale = 1.0f) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }

  // Both sides get the same values, rounded to the storage dtype.
  Pair make(std::vector<float> values, bool f32 = false) {
    DType gdt = f32 ? DType::f32 : dt_;
    std::vector<std::byte> raw(values.size() * dtype_size(gdt));
    convert_host(values.data(), DType::f32, raw.data(), gdt, values.size());
    convert_host(raw.data(), gdt, values.data(), DType::f32, values.size());
    Pair p{Buffer(Device::cpu(), gdt, values.size(), MemCategory::workspace),
           Buffer(Device::cuda(0), gdt, values.size(), MemCategory::workspace)};
    std::memcpy(p.c.data(), raw.data(), raw.size());
    upload(p.g, raw.data());
    return p;
  }
  Pair make_int(const std::vector<std::int32_t>& values) {
    Pair p{Buffer(Device::cpu(), DType::i32, values.size(), MemCategory::workspace),
           Buffer(Device::cuda(0), DType::i32, values.size(), MemCategory::workspace)};
    std::memcpy(p.c.data(), values.data(), values.size() * 4);
    upload(p.g, values.data());
    return p;
  }
  Pair poisoned(std::size_t n, bool f32 = false) {
    return make(std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()), f32);
  }

  // A whole model's loss and gradients on both devices from the same (rounded) initial weights and
  // one random batch of B x T tokens (every 9th target ignored).
  void expect_model_matches(const Model& model, int vocab_size, int B, int T, const char* name) {
    std::vector<std::int32_t> tok(B * T), tgt(B * T);
    for (int i = 0; i < B * T; ++i) tok[i] = static_cast<std::int32_t>(rng_() % vocab_size);
    for (int i = 0; i < B * T; ++i) tgt[i] = i % 9 == 4 ? -1 : tok[(i + 1) % (B * T)];
    ModelState sc(model, Device::cpu(), dt_), sg(model, Device::cuda(0), dt_);
    sg.init(77);
    sc.set_params_f32(sg.params_f32());  // the same (rounded) values on both sides
    Activations ac(model, B, T, Device::cpu(), dt_), ag(model, B, T, Device::cuda(0), dt_);
    ac.set_tokens(tok, tgt);
    ag.set_stream(gpu_->stream());  // batches go up on the stream the kernels run on
    ag.set_tokens(tok, tgt);
    sc.zero_grad(*cpu_);
    sg.zero_grad(*gpu_);
    float lc = forward(*cpu_, model, sc, ac), lg = forward(*gpu_, model, sg, ag);
    backward(*cpu_, model, sc, ac);
    backward(*gpu_, model, sg, ag);
    gpu_->synchronize();
    std::printf("  tiny %s loss cpu %.6f gpu %.6f (%s)\n", name, lc, lg, std::string(dtype_name(dt_)).c_str());
    EXPECT_LT(std::abs(lc - lg) / lc, dt_ == DType::f32 ? 1e-5 : 1e-2);
    auto gc = sc.grads_f32(), gg = sg.grads_f32();
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < gc.size(); ++i) {
      ASSERT_FALSE(std::isnan(gg[i]));
      diff += (double(gg[i]) - gc[i]) * (double(gg[i]) - gc[i]), norm += double(gc[i]) * gc[i];
    }
    std::printf("  tiny %s grads rel err %.2e\n", name, std::sqrt(diff / norm));
    EXPECT_LT(std::sqrt(diff / norm), dt_ == DType::f32 ? 1e-4 : 5e-2);
  }

  static std::vector<float> widened(const Buffer& c) {
    std::vector<float> out(c.numel());
    convert_host(c.data(), c.dtype(), out.data(), DType::f32, c.numel());
    return out;
  }

  std::vector<float> download(const Buffer& g) {
    gpu_->synchronize();
    std::vector<std::byte> raw(g.bytes());
    EXPECT_EQ(cudaMemcpy(raw.data(), g.data(), g.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<float> out(g.numel());
    convert_host(raw.data(), g.dtype(), out.data(), DType::f32, g.numel());
    return out;
  }

  double tol() const { return dt_ == DType::f32 ? 1e-4 : 1e-2; }

  // The GPU context with attention on cuDNN (where it loads) or on the flash kernels alone.
  void use_cudnn_attention(bool on) {
    gpu_ = ComputeContext::cuda(0, dt_, {.allow_tf32 = false, .cudnn_attention = on});
  }
  // Where the flash kernels' shapes were run with cuDNN asked for, cuDNN ran them if it loads (a
  // shape it refuses would silently cost its speed), and the flash kernels ran them otherwise.
  void expect_attention_path(bool flash_shape, bool cudnn_asked) {
    const cuda::CudnnLibrary& library = cuda::cudnn_library();
    const bool on_cudnn = as_cuda(*gpu_).cudnn_attention().last_forward_on_cudnn();
    EXPECT_EQ(on_cudnn, flash_shape && cudnn_asked && library.loaded)
        << (library.loaded ? "cuDNN " + std::to_string(library.version) + " loaded" : library.why_not);
    if (flash_shape && cudnn_asked)
      std::printf("  attention on %s\n", on_cudnn ? "cuDNN" : ("the flash kernels: " + library.why_not).c_str());
  }

  // ||gpu - cpu|| / ||cpu||, failing on any NaN.
  void expect_close(const Pair& p, const char* what, double tolerance = 0) {
    std::vector<float> g = download(p.g), c = widened(p.c);
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      ASSERT_FALSE(std::isnan(g[i]) || std::isnan(c[i])) << what << "[" << i << "] is NaN (unwritten?)";
      diff += (double(g[i]) - c[i]) * (double(g[i]) - c[i]);
      norm += double(c[i]) * c[i];
    }
    double err = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    std::printf("  %-28s %s rel err %.2e\n", what, std::string(dtype_name(dt_)).c_str(), err);
    EXPECT_LT(err, tolerance > 0 ? tolerance : tol()) << what << " (input seed " << seed_ << ")";
  }

  DType dt_ = DType::f32;
  std::unique_ptr<ComputeContext> gpu_, cpu_;
  std::mt19937_64 rng_;
  std::uint64_t seed_ = 0;
};

// C 96 takes the eight-column kernels, C 100 the scalar ones.
TEST_P(CudaVsCpu, LayerNormForwardBackward) {
  const int N = 300;
  for (int C : {96, 100}) {
    SCOPED_TRACE("C " + std::to_string(C));
    auto inp = make(random(N * C, 2.0f)), w = make(random(C)), b = make(random(C)), dout = make(random(N * C));
    auto out = poisoned(N * C), mean = poisoned(N, true), rstd = poisoned(N, true);
    for (auto* ctx : {cpu_.get(), gpu_.get()}) {
      auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
      ops::layernorm_forward(*ctx, v(out), v(mean), v(rstd), v(inp), v(w), v(b), N, C);
    }
    expect_close(out, "layernorm out");
    expect_close(rstd, "layernorm rstd");
    auto dinp = make(random(N * C)), dw = make(random(C)), db = make(random(C));  // accumulated into
    for (auto* ctx : {cpu_.get(), gpu_.get()}) {
      auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
      ops::layernorm_backward(*ctx, v(dinp), v(dw), v(db), v(dout), v(inp), v(w), v(mean), v(rstd), N, C);
    }
    expect_close(dinp, "layernorm dinp");
    expect_close(dw, "layernorm dweight");
    expect_close(db, "layernorm dbias");
  }
}

// GPT-2's MLP pair: c_fc with its GELU, and c_proj's backward into that GELU, with the products'
// epilogues on (cuBLASLt's bias + GELU and dGELU in bf16 and f16 where rows are multiples of 8
// elements: OC 104) and off, and OC 100, which keeps the separate kernels either way.
TEST_P(CudaVsCpu, LinearGeluWithAndWithoutEpilogues) {
  const int N = 96, IC = 64, OC2 = 48;
  for (bool epilogues : {true, false})
  for (int OC : {104, 100}) {
    SCOPED_TRACE("OC " + std::to_string(OC) + (epilogues ? " epilogues" : " separate kernels"));
    gpu_ = ComputeContext::cuda(0, dt_, {.allow_tf32 = false, .gemm_epilogues = epilogues});
    auto inp = make(random(N * IC)), w = make(random(OC * IC, 0.1f)), b = make(random(OC));
    auto w2 = make(random(OC2 * OC, 0.1f)), dout = make(random(N * OC2));
    auto out = poisoned(N * OC), pre = poisoned(N * OC), dpre = poisoned(N * OC);
    auto db = make(random(OC)), dw2 = make(random(OC2 * OC)), db2 = make(random(OC2));
    for (auto* ctx : {cpu_.get(), gpu_.get()}) {
      auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
      ops::linear_gelu_forward(*ctx, v(out), v(pre), v(inp), v(w), v(b), N, IC, OC);
      ops::linear_backward_into_gelu(*ctx, v(dpre), v(db), v(dw2), v(db2), v(dout), v(out), v(w2), v(pre), N, OC,
                                     OC2);
    }
    const bool fused = epilogues && OC % 8 == 0 && dt_ != DType::f32;
    EXPECT_EQ(as_cuda(*gpu_).epilogue_products(), fused ? 2u : 0u) << "the forward's and the dGELU's products";
    expect_close(pre, "linear_gelu pre");
    expect_close(out, "linear_gelu out");
    expect_close(dpre, "into gelu dpre");
    expect_close(db, "into gelu dbias");
    expect_close(dw2, "into gelu dweight2");
    expect_close(db2, "into gelu dbias2");
  }
}

// In bf16 and f16 the bias is the product's epilogue (cuBLASLt) where allowed: both ways here.
TEST_P(CudaVsCpu, LinearForwardBackwardPaddedRows) {
  for (bool epilogues : {true, false}) {
    SCOPED_TRACE(epilogues ? "epilogues" : "separate kernels");
    gpu_ = ComputeContext::cuda(0, dt_, {.allow_tf32 = false, .gemm_epilogues = epilogues});
    const int N = 200, IC = 64, OC = 72, ldo = 80;
    auto inp = make(random(N * IC)), w = make(random(OC * IC, 0.1f)), b = make(random(OC));
    auto out = poisoned(N * ldo);
    auto douth = random(N * ldo);
    for (int n = 0; n < N; ++n)
      for (int o = OC; o < ldo; ++o) douth[n * ldo + o] = 0.0f;
    auto dout = make(douth);
    auto dinp = poisoned(N * IC), dw = make(random(OC * IC)), db = make(random(OC));
    for (auto* ctx : {cpu_.get(), gpu_.get()}) {
      auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
      ops::linear_forward(*ctx, v(out), v(inp), v(w), v(b), N, IC, OC, ldo);
      ops::linear_backward(*ctx, v(dinp), v(dw), v(db), v(dout), v(inp), v(w), N, IC, OC, ldo);
    }
    // Padding columns of out are never written by either side: compare the real ones only.
    auto g = download(out.g), cpu_out = widened(out.c);
    double diff = 0, norm = 0;
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) {
        double c = cpu_out[n * ldo + o];
        ASSERT_FALSE(std::isnan(g[n * ldo + o]));
        diff += (g[n * ldo + o] - c) * (g[n * ldo + o] - c), norm += c * c;
      }
    EXPECT_LT(std::sqrt(diff / norm), tol()) << "linear out";
    EXPECT_EQ(as_cuda(*gpu_).epilogue_products(), epilogues && dt_ != DType::f32 ? 1u : 0u) << "the bias's product";
    expect_close(dinp, "linear dinp");
    expect_close(dw, "linear dweight");
    expect_close(db, "linear dbias");
  }
}

// OC 104 takes the eight-column bias + GELU kernels and the eight-element residual, OC 101 the
// scalar ones.
TEST_P(CudaVsCpu, GeluAndResidual) {
  const int N = 100;
  for (int OC : {101, 104}) {
    const int C = OC == 104 ? 96 : 100;  // residual + LayerNorm: one eight-element kernel at C 96, two at C 100
    SCOPED_TRACE("OC " + std::to_string(OC) + " C " + std::to_string(C));
    const std::size_t n = static_cast<std::size_t>(N) * OC;
    auto pre = make(random(n, 2.0f)), bias = make(random(OC)), y = make(random(n)), out = poisoned(n),
         dinp = poisoned(n), dbias = make(random(OC)), sum = poisoned(n);
    auto a = make(random(N * C, 2.0f)), b = make(random(N * C)), w = make(random(C)), lb = make(random(C));
    auto mid = poisoned(N * C), ln = poisoned(N * C), mean = poisoned(N, true), rstd = poisoned(N, true);
    for (auto* ctx : {cpu_.get(), gpu_.get()}) {
      auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
      ops::bias_gelu_forward(*ctx, v(out), v(pre), v(bias), N, OC);
      ops::gelu_bias_backward(*ctx, v(dinp), v(dbias), v(pre), v(y), N, OC);
      ops::residual_forward(*ctx, v(sum), v(pre), v(y));
      ops::residual_layernorm_forward(*ctx, v(mid), v(ln), v(mean), v(rstd), v(a), v(b), v(w), v(lb), N, C);
    }
    expect_close(pre, "gelu pre (bias added)");
    expect_close(out, "gelu out");
    expect_close(dinp, "gelu dinp");
    expect_close(dbias, "gelu dbias");
    expect_close(sum, "residual out");
    expect_close(mid, "residual_layernorm mid");
    expect_close(ln, "residual_layernorm out");
    expect_close(rstd, "residual_layernorm rstd");
  }
}

// Two shapes: hs 16 (the materialised path in every dtype) and hs 64 with T not a multiple of
// the 64-row tile (in bf16 and f16 cuDNN's fused attention, where cuDNN loads, and the flash
// kernels: att holds row statistics instead of probabilities, so only the output and the gradients
// are compared there).
TEST_P(CudaVsCpu, CausalAttentionForwardBackward) {
  struct Shape { int B, T, C, NH; };
  for (bool cudnn : {true, false})
  for (Shape s : {Shape{2, 40, 64, 4}, Shape{2, 100, 128, 2}}) {
    const int B = s.B, T = s.T, C = s.C, NH = s.NH;
    SCOPED_TRACE("T " + std::to_string(T) + " hs " + std::to_string(C / NH) + (cudnn ? " cuDNN asked" : " flash"));
    use_cudnn_attention(cudnn);
    const bool flash = cuda::flash_attention_supported(dt_, C / NH, 8);
    auto qkv = make(random(B * T * 3 * C)), dout = make(random(B * T * C));
    auto out = poisoned(B * T * C), att = poisoned(B * NH * T * T), dqkv = poisoned(B * T * 3 * C);
    auto scratch_c = Buffer(Device::cpu(), dt_, ops::attention_scratch_numel(Device::cpu(), dt_, B, T, C, NH), MemCategory::workspace);
    auto scratch_g = Buffer(Device::cuda(0), dt_, ops::attention_scratch_numel(Device::cuda(0), dt_, B, T, C, NH), MemCategory::workspace);
    ops::attention_forward(*cpu_, out.c.view(), att.c.view(), qkv.c.view(), scratch_c.view(), B, T, C, NH);
    ops::attention_forward(*gpu_, out.g.view(), att.g.view(), qkv.g.view(), scratch_g.view(), B, T, C, NH);
    expect_attention_path(flash, cudnn);
    expect_close(out, "attention out");
    if (!flash) expect_close(att, "attention probabilities");
    ops::attention_backward(*cpu_, dqkv.c.view(), dout.c.view(), qkv.c.view(), out.c.view(), att.c.view(),
                            scratch_c.view(), B, T, C, NH);
    ops::attention_backward(*gpu_, dqkv.g.view(), dout.g.view(), qkv.g.view(), out.g.view(), att.g.view(),
                            scratch_g.view(), B, T, C, NH);
    expect_close(dqkv, "attention dqkv", dt_ == DType::f32 ? 1e-4 : 2e-2);
  }
}

// Views that are not 16-byte aligned take the materialised path even where the shape would take
// the flash kernels: with att and scratch of the materialised sizes the result is the CPU's; with
// the flash path's sizes (what the activations plan) they are refused, never overrun.
TEST_P(CudaVsCpu, MisalignedAttentionViewsTakeTheMaterialisedPathOrAreRefused) {
  const int B = 1, T = 40, C = 64, NH = 1;  // hs 64
  if (!ops::attention_takes_flash(Device::cuda(0), dt_, B, T, C, NH)) GTEST_SKIP() << "fp32 never takes flash";
  auto shifted = [](const Buffer& b, std::size_t n) {  // n elements one element into b
    BufferView v = b.view();
    v.data = static_cast<std::byte*>(v.data) + dtype_size(v.dtype);
    v.numel = n;
    return v;
  };
  const std::size_t full_att = ops::attention_saved_numel(Device::cpu(), dt_, B, T, C, NH);
  const std::size_t full_scratch = 7 * std::size_t{B} * T * C + full_att;
  auto qkv = make(random(B * T * 3 * C)), out = poisoned(B * T * C + 1);
  auto att = poisoned(full_att + 1), scratch = poisoned(full_scratch + 1);
  auto scratch_c = Buffer(Device::cpu(), dt_, ops::attention_scratch_numel(Device::cpu(), dt_, B, T, C, NH),
                          MemCategory::workspace);
  ops::attention_forward(*cpu_, out.c.view(), att.c.view(), qkv.c.view(), scratch_c.view(), B, T, C, NH);
  ops::attention_forward(*gpu_, shifted(out.g, B * T * C), shifted(att.g, full_att), qkv.g.view(),
                         shifted(scratch.g, full_scratch), B, T, C, NH);
  std::vector<std::byte> host(std::size_t{B} * T * C * dtype_size(dt_));
  ASSERT_EQ(cudaMemcpy(host.data(), shifted(out.g, B * T * C).data, host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<float> gpu_out(std::size_t{B} * T * C), cpu_out(gpu_out.size());
  convert_host(host.data(), dt_, gpu_out.data(), DType::f32, gpu_out.size());
  convert_host(out.c.data(), dt_, cpu_out.data(), DType::f32, cpu_out.size());
  for (std::size_t i = 0; i < gpu_out.size(); ++i) ASSERT_NEAR(gpu_out[i], cpu_out[i], 2e-2) << i;
  const std::size_t flash_att = ops::attention_saved_numel(Device::cuda(0), dt_, B, T, C, NH);
  const std::size_t flash_scratch = ops::attention_scratch_numel(Device::cuda(0), dt_, B, T, C, NH);
  EXPECT_THROW(ops::attention_forward(*gpu_, shifted(out.g, B * T * C), shifted(att.g, flash_att), qkv.g.view(),
                                      shifted(scratch.g, flash_scratch), B, T, C, NH),
               std::invalid_argument);
}

// Vp 1024 takes the eight-element one-sweep kernels (V 1000: a partial last chunk), Vp 1003 the
// scalar ones; separately and as the fused classifier.
TEST_P(CudaVsCpu, SoftmaxCrossEntropy) {
  const int N = 64, V = 1000;
  for (int Vp : {1024, 1003}) {
    SCOPED_TRACE("Vp " + std::to_string(Vp));
    auto logits = make(random(N * Vp, 3.0f));
    std::vector<std::int32_t> t(N);
    for (int n = 0; n < N; ++n) t[n] = n % 7 == 3 ? -1 : static_cast<std::int32_t>(rng_() % V);
    auto targets = make_int(t);
    auto losses = poisoned(N, true), dlogits = poisoned(N * Vp);
    for (auto* ctx : {cpu_.get(), gpu_.get()}) {
      auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
      ops::softmax_xent_forward(*ctx, v(losses), v(logits), v(targets), N, V, Vp);
      ops::softmax_xent_backward(*ctx, v(dlogits), v(logits), v(targets), 1.0f / N, N, V, Vp);
    }
    expect_close(losses, "softmax_xent losses", dt_ == DType::f32 ? 1e-5 : 1e-2);
    expect_close(dlogits, "softmax_xent dlogits");
    // The fused classifier: losses and the gradient over the logits in one kernel.
    auto fused_losses = poisoned(N, true);
    for (auto* ctx : {cpu_.get(), gpu_.get()}) {
      auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
      ops::softmax_xent_forward_backward(*ctx, v(fused_losses), v(logits), v(targets), 1.0f / N, N, V, Vp);
    }
    expect_close(fused_losses, "fused classifier losses", dt_ == DType::f32 ? 1e-5 : 1e-2);
    expect_close(logits, "fused classifier dlogits");
  }
}

TEST_P(CudaVsCpu, EmbeddingForwardBackward) {
  const int B = 3, T = 20, C = 48, V = 30;
  std::vector<std::int32_t> tok(B * T);
  for (auto& x : tok) x = static_cast<std::int32_t>(rng_() % V);
  // The token index Activations builds for the GPU backward (positions grouped by token).
  std::map<std::int32_t, std::vector<std::int32_t>> groups;
  for (int i = 0; i < B * T; ++i) groups[tok[i]].push_back(i);
  std::vector<std::int32_t> positions, starts, tokens_of;
  for (auto& [token, ps] : groups) {
    starts.push_back(static_cast<std::int32_t>(positions.size()));
    tokens_of.push_back(token);
    positions.insert(positions.end(), ps.begin(), ps.end());
  }
  starts.push_back(static_cast<std::int32_t>(positions.size()));
  auto tokens = make_int(tok), ip = make_int(positions), is = make_int(starts), it = make_int(tokens_of);
  ops::TokenIndex index{ip.g.view(), is.g.view(), it.g.view(), static_cast<int>(tokens_of.size())};
  auto wte = make(random(V * C)), wpe = make(random(T * C)), dout = make(random(B * T * C));
  auto out = poisoned(B * T * C), dwte = make(random(V * C)), dwpe = make(random(T * C));
  for (auto* ctx : {cpu_.get(), gpu_.get()}) {
    auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
    ops::embedding_forward(*ctx, v(out), v(tokens), v(wte), v(wpe), B, T, C);
    ops::embedding_backward(*ctx, v(dwte), v(dwpe), v(dout), v(tokens), index, B, T, C);
  }
  expect_close(out, "embedding out");
  expect_close(dwte, "embedding dwte");
  expect_close(dwpe, "embedding dwpe");
}

// The whole tiny GPT-2 (every kernel and the block wiring) on both devices from the same init.
// The tiny preset (hs 8: the materialised attention), and hs 64 with T = 80 (the flash kernels in
// bf16 and f16, over a full and a partial tile).
TEST_P(CudaVsCpu, TinyGPT2LossAndGradients) {
  for (int hs : {8, 64}) {
    GPT2Config c = GPT2Config::preset("tiny");
    if (hs == 64) c.n_embd = 128, c.n_head = 2, c.block_size = 80;
    SCOPED_TRACE("hs " + std::to_string(hs));
    GPT2 model(c);
    const int B = 4, T = c.block_size;
    expect_model_matches(model, c.vocab_size, B, T, "GPT-2");
  }
}

// ---- Llama family ----

TEST_P(CudaVsCpu, RMSNormForwardBackward) {
  const int N = 300, C = 96;
  auto inp = make(random(N * C, 2.0f)), w = make(random(C)), dout = make(random(N * C));
  auto out = poisoned(N * C), rstd = poisoned(N, true);
  auto dinp = make(random(N * C)), dw = make(random(C));  // accumulated into
  for (auto* ctx : {cpu_.get(), gpu_.get()}) {
    auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
    ops::rmsnorm_forward(*ctx, v(out), v(rstd), v(inp), v(w), N, C, 1e-5f);
    ops::rmsnorm_backward(*ctx, v(dinp), v(dw), v(dout), v(inp), v(w), v(rstd), N, C, {}, true);
  }
  expect_close(out, "rmsnorm out");
  expect_close(rstd, "rmsnorm rstd");
  expect_close(dinp, "rmsnorm dinp");
  expect_close(dw, "rmsnorm dweight");
}

TEST_P(CudaVsCpu, QKNormOnHeadsInsideRowsInPlace) {
  const int N = 70, heads = 6, hs = 32, W = 10 * hs;  // 6 of 10 heads per row, as q and k of qkv
  auto inp = make(random(N * W, 2.0f)), w = make(random(hs));
  auto out = make(std::vector<float>(N * W, 0.0f)), rstd = poisoned(N * heads, true), dw = make(random(hs));
  auto d = make(random(N * W));  // overwritten in place by the input gradient
  for (auto* ctx : {cpu_.get(), gpu_.get()}) {
    auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
    ops::rmsnorm_forward(*ctx, v(out), v(rstd), v(inp), v(w), N * heads, hs, 1e-6f, {heads, std::size_t(W)});
    ops::rmsnorm_backward(*ctx, v(d), v(dw), v(d), v(inp), v(w), v(rstd), N * heads, hs, {heads, std::size_t(W)},
                          false);
  }
  expect_close(out, "qk-norm out");
  expect_close(d, "qk-norm dinp (in place)");
  expect_close(dw, "qk-norm dweight");
}

TEST_P(CudaVsCpu, RopeForwardAndInverse) {
  const int B = 2, T = 50, heads = 6, hs = 64, ld = 8 * hs;
  const auto inv_freq = cpu::rope_inv_freq(hs, 500000.0, cpu::RopeScaling{32.0f, 1.0f, 4.0f, 16});
  auto x = make(random(B * T * ld)), g = make(random(B * T * ld));
  for (auto* ctx : {cpu_.get(), gpu_.get()}) {
    auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
    ops::rope(*ctx, v(x), inv_freq, B, T, heads, hs, ld, false);
    ops::rope(*ctx, v(g), inv_freq, B, T, heads, hs, ld, true);
  }
  expect_close(x, "rope forward");
  expect_close(g, "rope inverse");
}

TEST_P(CudaVsCpu, SwiGLUForwardBackward) {
  const int N = 100, I = 88;
  auto gu = make(random(N * 2 * I, 2.0f)), dout = make(random(N * I));
  auto out = poisoned(N * I), dgu = poisoned(N * 2 * I);
  for (auto* ctx : {cpu_.get(), gpu_.get()}) {
    auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
    ops::swiglu_forward(*ctx, v(out), v(gu), N, I);
    ops::swiglu_backward(*ctx, v(dgu), v(dout), v(gu), N, I);
  }
  expect_close(out, "swiglu out");
  expect_close(dgu, "swiglu dgu");
}

// hs 16: the materialised path in every dtype. hs 64 (SmolLM's and Llama 3.2's) with T not a
// multiple of the 64-row tile: in bf16 and f16 cuDNN's fused attention (where cuDNN loads) and the
// flash kernels, each key/value head serving its group, att holding row statistics (only the
// output and the gradients are compared there).
TEST_P(CudaVsCpu, GroupedQueryAttentionForwardBackward) {
  struct Shape { int NH, KV, hs, T; };
  for (bool cudnn : {true, false})
  for (Shape s : {Shape{4, 2, 16, 40}, Shape{4, 1, 16, 40}, Shape{3, 3, 16, 40}, Shape{9, 3, 64, 100},
                  Shape{4, 1, 64, 70}, Shape{2, 2, 64, 64}}) {
    const int B = 2, NH = s.NH, KV = s.KV, hs = s.hs, T = s.T, W = (NH + 2 * KV) * hs;
    SCOPED_TRACE("NH " + std::to_string(NH) + " KV " + std::to_string(KV) + " hs " + std::to_string(hs) +
                 (cudnn ? " cuDNN asked" : " flash"));
    use_cudnn_attention(cudnn);
    const bool flash = ops::gqa_attention_takes_flash(Device::cuda(0), dt_, B, T, NH, KV, hs);
    auto qkv = make(random(B * T * W)), dout = make(random(B * T * NH * hs));
    auto out = poisoned(B * T * NH * hs), att = poisoned(B * NH * T * T), dqkv = poisoned(B * T * W);
    auto scratch_c = Buffer(Device::cpu(), dt_, ops::gqa_attention_scratch_numel(Device::cpu(), dt_, B, T, NH, KV, hs),
                            MemCategory::workspace);
    auto scratch_g = Buffer(Device::cuda(0), dt_,
                            ops::gqa_attention_scratch_numel(Device::cuda(0), dt_, B, T, NH, KV, hs),
                            MemCategory::workspace);
    ops::gqa_attention_forward(*cpu_, out.c.view(), att.c.view(), qkv.c.view(), scratch_c.view(), B, T, NH, KV, hs);
    ops::gqa_attention_forward(*gpu_, out.g.view(), att.g.view(), qkv.g.view(), scratch_g.view(), B, T, NH, KV, hs);
    expect_attention_path(flash, cudnn);
    expect_close(out, "gqa attention out");
    if (!flash) expect_close(att, "gqa attention probabilities");
    ops::gqa_attention_backward(*cpu_, dqkv.c.view(), dout.c.view(), qkv.c.view(), out.c.view(), att.c.view(),
                                scratch_c.view(), B, T, NH, KV, hs);
    ops::gqa_attention_backward(*gpu_, dqkv.g.view(), dout.g.view(), qkv.g.view(), out.g.view(), att.g.view(),
                                scratch_g.view(), B, T, NH, KV, hs);
    expect_close(dqkv, "gqa attention dqkv", dt_ == DType::f32 ? 1e-4 : 2e-2);
  }
}

TEST_P(CudaVsCpu, TokenEmbeddingForwardBackward) {
  const int N = 60, C = 48, V = 30;
  std::vector<std::int32_t> tok(N);
  for (auto& x : tok) x = static_cast<std::int32_t>(rng_() % V);
  std::map<std::int32_t, std::vector<std::int32_t>> groups;
  for (int i = 0; i < N; ++i) groups[tok[i]].push_back(i);
  std::vector<std::int32_t> positions, starts, tokens_of;
  for (auto& [token, ps] : groups) {
    starts.push_back(static_cast<std::int32_t>(positions.size()));
    tokens_of.push_back(token);
    positions.insert(positions.end(), ps.begin(), ps.end());
  }
  starts.push_back(static_cast<std::int32_t>(positions.size()));
  auto tokens = make_int(tok), ip = make_int(positions), is = make_int(starts), it = make_int(tokens_of);
  ops::TokenIndex index{ip.g.view(), is.g.view(), it.g.view(), static_cast<int>(tokens_of.size())};
  auto wte = make(random(V * C)), dout = make(random(N * C)), out = poisoned(N * C), dwte = make(random(V * C));
  for (auto* ctx : {cpu_.get(), gpu_.get()}) {
    auto v = [&](Pair& p) { return ctx == cpu_.get() ? p.c.view() : p.g.view(); };
    ops::token_embedding_forward(*ctx, v(out), v(tokens), v(wte), N, C);
    ops::token_embedding_backward(*ctx, v(dwte), v(dout), v(tokens), index, N, C);
  }
  expect_close(out, "token embedding out");
  expect_close(dwte, "token embedding dwte");
}

// A whole small Llama (GQA, QK-norm, Llama 3 RoPE scaling, untied head) on both devices.
TEST_P(CudaVsCpu, TinyLlamaLossAndGradients) {
  LlamaConfig c;
  c.n_layer = 2, c.n_head = 4, c.n_kv_head = 2, c.n_embd = 64, c.intermediate_size = 96, c.vocab_size = 128,
  c.block_size = 32, c.qk_norm = true, c.tie_embeddings = false;
  c.rope_scaling = cpu::RopeScaling{8.0f, 1.0f, 4.0f, 16};
  Llama model(c);
  expect_model_matches(model, c.vocab_size, 3, 32, "Llama");
}

INSTANTIATE_TEST_SUITE_P(Storage, CudaVsCpu, ::testing::Values(DType::f32, DType::bf16, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// Loading cuDNN needs no GPU: a library that is not there is named with the loader's reason, and
// where libcudnn.so.9 is on the loader's path (CUDA 13 toolkits bring it) it is cuDNN 9.
TEST(CudnnLibrary, LoadsByNameOrSaysWhyNot) {
  const cuda::CudnnLibrary missing = cuda::load_cudnn_library("libzt-no-such-cudnn.so.9");
  EXPECT_FALSE(missing.loaded);
  EXPECT_NE(missing.why_not.find("libzt-no-such-cudnn.so.9"), std::string::npos) << missing.why_not;
  const cuda::CudnnLibrary libm = cuda::load_cudnn_library("libm.so.6");  // loads, and is not cuDNN
  EXPECT_FALSE(libm.loaded);
  EXPECT_NE(libm.why_not.find("not cuDNN"), std::string::npos) << libm.why_not;
  const cuda::CudnnLibrary& here = cuda::cudnn_library();
  if (!here.loaded) GTEST_SKIP() << here.why_not;
  EXPECT_EQ(here.version / 10000, 9);
  EXPECT_TRUE(here.why_not.empty());
}

#endif

TEST(ComputeContextTest, CpuContextSetsBlasThreadsAndCudaNeedsADevice) {
  auto ctx = ComputeContext::cpu(2);
  EXPECT_EQ(ctx->device(), Device::cpu());
  EXPECT_EQ(ctx->dtype(), DType::f32);
  EXPECT_GE(cpu::blas_threads(), 1);
  ComputeContext::cpu(1);
  EXPECT_EQ(cpu::blas_threads(), 1);
  if (cuda_device_count() == 0) {
    EXPECT_THROW(ComputeContext::cuda(0, DType::bf16), UserError);
  }
}

#if !ZT_HAVE_CUDA

TEST(CudaVsCpu, SkippedWithoutCudaBackend) { GTEST_SKIP() << "built without the CUDA backend (ZT_HAVE_CUDA off)"; }

#endif

}  // namespace
}  // namespace zt::models::test
