// zt_bench_gpt2_step: one GPT-2 training step (forward + backward, gradients zeroed first) on one
// GPU, reporting tokens/s and MFU against the GPU's dense peak for the compute dtype.
//
//   zt_bench_gpt2_step [--preset gpt2-124m] [--batch 16] [--seq 1024] [--dtype bf16]
//                      [--warmup 3] [--steps 20] [--attention cudnn|flash] [--epilogues on|off]
//
// --attention: cuDNN's fused attention where cuDNN loads (the default, as train.cudnn_attention),
// or zerotrain's own flash kernels; the output says which ran. --epilogues: biases and GELU fused
// into cuBLASLt's products (the default), or the separate kernels.
// The optimizer step is not part of it (the fused AdamW lives in optim/ and is measured there).
// FLOPs per step are Model::flops_per_step (models/flops.h: 6·N·tokens + 12·L·T·C·tokens).
// Peak: a table keyed on the device name (dense tensor-core rates from the vendors' datasheets).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "models/activations.h"
#include "models/gpt2.h"
#include "models/cuda/cuda_context.h"
#include "models/model_state.h"
#include "core/cuda/cuda_check.h"

namespace {

// Dense peak FLOP/s by device-name substring; 0 when unknown (MFU is then not reported).
double peak_flops(const std::string& device, zt::DType dtype) {
  struct Peak {
    const char* name;
    double bf16, f32;
  };
  static const Peak table[] = {
      {"H200", 989e12, 67e12}, {"H100", 989e12, 67e12}, {"A100", 312e12, 19.5e12}};
  for (const Peak& p : table)
    if (device.find(p.name) != std::string::npos) return dtype == zt::DType::f32 ? p.f32 : p.bf16;
  return 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace zt;
  using namespace zt::models;
  std::string preset = "gpt2-124m", dtype_text = "bf16", attention = "cudnn";
  bool epilogues = true;
  int B = 16, T = 1024, warmup = 3, steps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--preset") preset = v;
    else if (k == "--batch") B = std::stoi(v);
    else if (k == "--seq") T = std::stoi(v);
    else if (k == "--dtype") dtype_text = v;
    else if (k == "--warmup") warmup = std::stoi(v);
    else if (k == "--steps") steps = std::stoi(v);
    else if (k == "--attention" && (v == "cudnn" || v == "flash")) attention = v;
    else if (k == "--epilogues" && (v == "on" || v == "off")) epilogues = v == "on";
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  try {
    DType dtype = parse_dtype(dtype_text);
    auto ctx = ComputeContext::cuda(0, dtype, {.cudnn_attention = attention == "cudnn", .gemm_epilogues = epilogues});
    cudaDeviceProp prop{};
    ZT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    GPT2 model(GPT2Config::preset(preset));
    ModelState state(model, Device::cuda(0), dtype);
    state.init(1);
    Activations acts(model, B, T, Device::cuda(0), dtype);
    acts.set_stream(ctx->stream());
    std::mt19937_64 rng(1);
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(B) * T), targets(tokens.size());
    for (auto& t : tokens) t = static_cast<std::int32_t>(rng() % model.config().vocab_size);
    for (std::size_t i = 0; i < tokens.size(); ++i) targets[i] = tokens[(i + 1) % tokens.size()];
    acts.set_tokens(tokens, targets);
    acts.set_loss_gradient_in_forward(1.0f);  // the fused classifier, as in training (backward's scale 1)

    auto step = [&] {
      state.zero_grad(*ctx);
      for (std::size_t i = 0; i < model.num_blocks(); ++i) forward_block(*ctx, model, i, state.block_params(i), acts);
      for (std::size_t i = model.num_blocks(); i-- > 0;) {
        BufferView tied;
        if (auto t = model.block(i).tied_block()) tied = state.grads(*t);
        backward_block(*ctx, model, i, state.block_params(i), state.grads(i), tied, acts, 1.0f);
      }
    };
    for (int i = 0; i < warmup; ++i) step();
    ctx->synchronize();
    std::vector<double> ms;
    for (int i = 0; i < steps; ++i) {
      Event start = ctx->stream().record();
      step();
      Event end = ctx->stream().record();
      end.synchronize();
      ms.push_back(end.elapsed_ms_since(start));
    }
    std::sort(ms.begin(), ms.end());
    double median = ms[ms.size() / 2] / 1e3;
    double flops = model.flops_per_step(B, T);
    double peak = peak_flops(prop.name, dtype);
    double tokens_per_s = static_cast<double>(B) * T / median;
    std::printf("device %s, %s, %s, micro batch %d x %d, %zu params, activations %.2f GiB\n", prop.name,
                preset.c_str(), dtype_text.c_str(), B, T, model.param_count(),
                static_cast<double>(acts.bytes()) / (1 << 30));
    std::printf("step (fwd+bwd) median %.2f ms (min %.2f, max %.2f over %d), %.0f tokens/s, %.1f TFLOP/s", median * 1e3,
                ms.front(), ms.back(), steps, tokens_per_s, flops / median / 1e12);
    if (peak > 0)
      std::printf(", MFU %.1f %% of %.0f TFLOP/s\n", 100.0 * flops / median / peak, peak / 1e12);
    else
      std::printf(", MFU unknown (no peak for this device)\n");
    std::printf("loss at the last step %.4f\n", acts.mean_loss());
    const cuda::CudnnLibrary& cudnn = cuda::cudnn_library();
    std::printf("products with cuBLASLt epilogues: %zu per step (%s)\n",
                as_cuda(*ctx).epilogue_products() / static_cast<std::size_t>(warmup + steps),
                epilogues ? "on" : "off");
    std::printf("attention on %s\n", as_cuda(*ctx).cudnn_attention().last_forward_on_cudnn()
                                          ? ("cuDNN " + std::to_string(cudnn.version)).c_str()
                                          : ("the flash kernels" + (attention == "cudnn" ? ": " + cudnn.why_not : ""))
                                                .c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zt_bench_gpt2_step: %s\n", e.what());
    return 1;
  }
  return 0;
}
