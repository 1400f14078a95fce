// Flash attention kernels (flash_attention.h). A block of 4 warps takes 64 query rows (forward,
// dq) or 64 key rows (dk, dv), 16 per warp, and walks the tiles of the other side through shared
// memory, two buffers deep (cp.async). The products are mma.sync m16n8k16 (bf16 or f16 in, fp32
// accumulators) with B fragments read by ldmatrix; a product's accumulator fragment is laid out
// as the next product's A operand, so scores and probabilities never leave registers.
// Exponentials are base 2 with the softmax scale folded in: the saved statistic of a row is
// m + log2(l) in that unit.
#include "models/cuda/flash_attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr int kD = kFlashHeadSize;
constexpr int kTile = kFlashTile;
constexpr int kThreads = 128;        // 4 warps, 16 rows each
constexpr int kLd = kD + 8;          // shared-memory row pitch: 144 bytes spreads a warp's rows over the banks
constexpr float kLog2e = 1.4426950408889634f;

// ---- the m16n8k16 product and its fragments ------------------------------------------------
// With g = lane / 4 and t = lane % 4: A (16 x 16, row-major) holds rows g and g + 8, columns
// 2t, 2t + 1 (registers 0 and 1) and 2t + 8, 2t + 9 (registers 2 and 3, in the order row g, row
// g + 8); B (16 x 8) holds rows 2t, 2t + 1 and 2t + 8, 2t + 9 of column g; the accumulator
// (16 x 8) holds rows g (elements 0, 1) and g + 8 (elements 2, 3), columns 2t, 2t + 1.

template <typename S> __device__ __forceinline__ void mma(float* c, const std::uint32_t* a, std::uint32_t b0,
                                                          std::uint32_t b1);
template <> __device__ __forceinline__ void mma<__nv_bfloat16>(float* c, const std::uint32_t* a, std::uint32_t b0,
                                                               std::uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <> __device__ __forceinline__ void mma<__half>(float* c, const std::uint32_t* a, std::uint32_t b0,
                                                        std::uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats as one register of two 16-bit values, the first in the low half.
template <typename S> __device__ __forceinline__ std::uint32_t pack(float lo, float hi);
template <> __device__ __forceinline__ std::uint32_t pack<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&v);
}
template <> __device__ __forceinline__ std::uint32_t pack<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&v);
}

template <typename S> using Tile = S[kTile][kLd];

// Two adjacent elements of a row: an A fragment's register.
template <typename S> __device__ __forceinline__ std::uint32_t pair(const Tile<S>& t, int r, int c) {
  return *reinterpret_cast<const std::uint32_t*>(&t[r][c]);
}
// The A fragments of this warp's 16 rows (row0 .. row0 + 15) of a tile, for k = 0 .. 63.
template <typename S> __device__ __forceinline__ void load_a(std::uint32_t (&a)[4][4], const Tile<S>& t, int row0) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = 2 * (lane % 4);
#pragma unroll
  for (int kc = 0; kc < 4; ++kc) {
    a[kc][0] = pair(t, row0 + g, kc * 16 + c);
    a[kc][1] = pair(t, row0 + g + 8, kc * 16 + c);
    a[kc][2] = pair(t, row0 + g, kc * 16 + c + 8);
    a[kc][3] = pair(t, row0 + g + 8, kc * 16 + c + 8);
  }
}

// Four 8 x 8 matrices of a tile in one instruction: lane L names row L % 8 of matrix L / 8, and
// gets element (L / 4, 2 (L % 4) and + 1) of each (with .trans: elements (2 (L % 4) and + 1, L / 4),
// two rows of one column): the B fragments of two products at once.
template <bool transposed> __device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_address) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row_address));
  if constexpr (transposed)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

// acc (16 x 64) = A (16 x 64, fragments) * tile^T: column n of the result is row n of the tile.
// Each ldmatrix takes rows nt*8 .. +7 of the tile at 32 columns: B of two k-chunks.
template <typename S>
__device__ __forceinline__ void product_with_rows(float (&acc)[8][4], const std::uint32_t (&a)[4][4], const Tile<S>& t) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int nt = 0; nt < 8; ++nt) {
    acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      std::uint32_t b[4];
      ldmatrix_x4<false>(b, &t[nt * 8 + lane % 8][half * 32 + (lane / 8) * 8]);
      mma<S>(acc[nt], a[2 * half], b[0], b[1]);
      mma<S>(acc[nt], a[2 * half + 1], b[2], b[3]);
    }
  }
}

// acc (16 x 64) += P (16 x 64, accumulator fragments rounded to S) * tile. Each transposed
// ldmatrix takes rows kc*16 .. +15 at 16 columns: B of two n-tiles.
template <typename S>
__device__ __forceinline__ void accumulate_with_tile(float (&acc)[8][4], const float (&p)[8][4], const Tile<S>& t) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kc = 0; kc < 4; ++kc) {
    const std::uint32_t a[4] = {pack<S>(p[2 * kc][0], p[2 * kc][1]), pack<S>(p[2 * kc][2], p[2 * kc][3]),
                                pack<S>(p[2 * kc + 1][0], p[2 * kc + 1][1]), pack<S>(p[2 * kc + 1][2], p[2 * kc + 1][3])};
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      std::uint32_t b[4];
      ldmatrix_x4<true>(b, &t[kc * 16 + ((lane / 8) % 2) * 8 + lane % 8][(2 * np + lane / 16) * 8]);
      mma<S>(acc[2 * np], a, b[0], b[1]);
      mma<S>(acc[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// Rows first .. first + 63 of one head into a tile, 16 bytes a thread at a time; rows at or past
// T are zeros.
template <typename S> __device__ __forceinline__ void load_tile(Tile<S>& t, const S* head, std::int64_t row_stride,
                                                               int first, int T) {
  for (int i = threadIdx.x; i < kTile * kD / 8; i += kThreads) {
    const int r = i / (kD / 8), c = (i % (kD / 8)) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (first + r < T) v = *reinterpret_cast<const uint4*>(head + (first + r) * row_stride + c);
    *reinterpret_cast<uint4*>(&t[r][c]) = v;
  }
}

// The same without waiting: cp.async copies that land while the block computes on the other
// buffer (rows at or past T are zero-filled: a source size of 0 reads nothing). Completed by
// cp_async_wait and made visible to the block by the __syncthreads after it.
template <typename S> __device__ __forceinline__ void issue_tile(Tile<S>& t, const S* head, std::int64_t row_stride,
                                                                int first, int T) {
  for (int i = threadIdx.x; i < kTile * kD / 8; i += kThreads) {
    const int r = i / (kD / 8), c = (i % (kD / 8)) * 8;
    const bool inside = first + r < T;
    const S* src = inside ? head + (first + r) * row_stride + c : head;
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&t[r][c]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 16 : 0));
  }
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
}

// The loop over key tiles 0 .. last of the forward and dq kernels: tile kt + 1 of keys and values
// goes into the buffers tile kt does not use (read by nobody since the iteration before), then
// tile kt, issued the iteration before, is waited for; the last tile waits for everything.
template <typename S>
__device__ __forceinline__ void next_key_value_tiles(Tile<S> (&sk)[2], Tile<S> (&sv)[2], const S* k, const S* v,
                                                     const FlashAttention& a, int kt, int last) {
  if (kt < last) {
    issue_tile<S>(sk[1 - kt % 2], k, a.k.row, (kt + 1) * kTile, a.T);
    issue_tile<S>(sv[1 - kt % 2], v, a.v.row, (kt + 1) * kTile, a.T);
    cp_async_commit();
    cp_async_wait<1>();
  } else {
    cp_async_wait<0>();
  }
}

// A warp's 16 rows of an accumulator (scaled per row) into rows row0 .. row0 + 15 of a head.
template <typename S> __device__ __forceinline__ void store_rows(S* head, std::int64_t row_stride, int row0, int T,
                                                                const float (&acc)[8][4], float scale0, float scale1) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = 2 * (lane % 4);
#pragma unroll
  for (int nt = 0; nt < 8; ++nt) {
    if (row0 + g < T)
      *reinterpret_cast<std::uint32_t*>(head + (row0 + g) * row_stride + nt * 8 + c) =
          pack<S>(acc[nt][0] * scale0, acc[nt][1] * scale0);
    if (row0 + g + 8 < T)
      *reinterpret_cast<std::uint32_t*>(head + (row0 + g + 8) * row_stride + nt * 8 + c) =
          pack<S>(acc[nt][2] * scale1, acc[nt][3] * scale1);
  }
}

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

struct Pointers {
  const void *q, *k, *v, *y, *dy;
  float* stats;  // written by forward, read by backward
  float* dot;    // rowsum(dy * y)
  void *out, *dq, *dk, *dv;
};

template <typename S> __device__ __forceinline__ const S* head_of(const void* base, const HeadsLayout& l, int b, int h) {
  return static_cast<const S*>(base) + b * l.batch + h * l.head;
}
template <typename S> __device__ __forceinline__ S* head_of(void* base, const HeadsLayout& l, int b, int h) {
  return static_cast<S*>(base) + b * l.batch + h * l.head;
}

// ---- forward ------------------------------------------------------------------------------------

template <typename S>
__global__ void __launch_bounds__(kThreads) flash_forward_kernel(FlashAttention a, Pointers p, float scale_log2) {
  __shared__ __align__(16) Tile<S> sq, sk[2], sv[2];  // keys and values double-buffered
  const int bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH, hk = h / a.group;
  const int tiles = (a.T + kTile - 1) / kTile;
  const int qt = tiles - 1 - static_cast<int>(blockIdx.y);  // the longest rows first
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = 2 * (lane % 4);
  const S* q = head_of<S>(p.q, a.q, b, h);
  const S* k = head_of<S>(p.k, a.k, b, hk);
  const S* v = head_of<S>(p.v, a.v, b, hk);
  const int row0 = qt * kTile + warp * 16;  // this warp's first query row

  issue_tile<S>(sk[0], k, a.k.row, 0, a.T);
  issue_tile<S>(sv[0], v, a.v.row, 0, a.T);
  cp_async_commit();
  load_tile<S>(sq, q, a.q.row, qt * kTile, a.T);
  __syncthreads();
  std::uint32_t qa[4][4];
  load_a<S>(qa, sq, warp * 16);

  float o[8][4] = {};
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;  // rows g and g + 8
  for (int kt = 0; kt <= qt; ++kt) {
    const int buf = kt % 2;
    next_key_value_tiles<S>(sk, sv, k, v, a, kt, qt);
    __syncthreads();
    float s[8][4];
    product_with_rows<S>(s, qa, sk[buf]);
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = kt * kTile + nt * 8 + c + (e & 1), row = row0 + g + (e < 2 ? 0 : 8);
        s[nt][e] = key <= row && key < a.T ? s[nt][e] * scale_log2 : -INFINITY;
        if (e < 2) mx0 = fmaxf(mx0, s[nt][e]); else mx1 = fmaxf(mx1, s[nt][e]);
      }
    // Key 0 is in every row's first tile, so the running maximum is finite from then on.
    const float n0 = fmaxf(m0, quad_max(mx0)), n1 = fmaxf(m1, quad_max(mx1));
    const float alpha0 = exp2f(m0 - n0), alpha1 = exp2f(m1 - n1);
    m0 = n0, m1 = n1;
    float r0 = 0.0f, r1 = 0.0f;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      s[nt][0] = exp2f(s[nt][0] - n0), s[nt][1] = exp2f(s[nt][1] - n0);
      s[nt][2] = exp2f(s[nt][2] - n1), s[nt][3] = exp2f(s[nt][3] - n1);
      r0 += s[nt][0] + s[nt][1], r1 += s[nt][2] + s[nt][3];
      o[nt][0] *= alpha0, o[nt][1] *= alpha0, o[nt][2] *= alpha1, o[nt][3] *= alpha1;
    }
    l0 = l0 * alpha0 + r0, l1 = l1 * alpha1 + r1;
    accumulate_with_tile<S>(o, s, sv[buf]);
    __syncthreads();  // every warp is done with this buffer before the next iteration refills it
  }
  l0 = quad_sum(l0), l1 = quad_sum(l1);
  store_rows<S>(head_of<S>(p.out, a.y, b, h), a.y.row, row0, a.T, o, 1.0f / l0, 1.0f / l1);
  if (lane % 4 == 0) {
    float* stats = p.stats + static_cast<std::int64_t>(bh) * a.T;
    if (row0 + g < a.T) stats[row0 + g] = m0 + log2f(l0);
    if (row0 + g + 8 < a.T) stats[row0 + g + 8] = m1 + log2f(l1);
  }
}

// ---- backward -----------------------------------------------------------------------------------

// dot[bh, t] = sum_d dy * y, a warp a row.
template <typename S> __global__ void flash_dot_kernel(FlashAttention a, Pointers p) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= static_cast<std::int64_t>(a.B) * a.NH * a.T) return;
  const int bh = static_cast<int>(row / a.T), t = static_cast<int>(row % a.T), b = bh / a.NH, h = bh % a.NH;
  const S* y = head_of<S>(p.y, a.y, b, h) + t * a.y.row;
  const S* dy = head_of<S>(p.dy, a.y, b, h) + t * a.y.row;
  float d = load(y + 2 * lane) * load(dy + 2 * lane) + load(y + 2 * lane + 1) * load(dy + 2 * lane + 1);
  d = warp_sum(d);
  if (lane == 0) p.dot[row] = d;
}

// dk, dv of 64 keys: over the query heads of their group and the query tiles at or after them.
template <typename S>
__global__ void __launch_bounds__(kThreads) flash_dkdv_kernel(FlashAttention a, Pointers p, float scale_log2,
                                                              float scale) {
  __shared__ __align__(16) Tile<S> sq[2], sdy[2];  // queries and their output gradients double-buffered
  __shared__ float sstat[2][kTile], sdot[2][kTile];
  const int bh = blockIdx.x, b = bh / (a.NH / a.group), hk = bh % (a.NH / a.group);
  const int tiles = (a.T + kTile - 1) / kTile;
  const int kt = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = 2 * (lane % 4);
  const int key0 = kt * kTile + warp * 16;  // this warp's first key

  // Step i takes query head hk * group + i / span and query tile kt + i % span.
  const int span = tiles - kt, steps = a.group * span;
  auto issue = [&](int i) {
    const int h = hk * a.group + i / span, qt = kt + i % span, buf = i % 2;
    issue_tile<S>(sq[buf], head_of<S>(p.q, a.q, b, h), a.q.row, qt * kTile, a.T);
    issue_tile<S>(sdy[buf], head_of<S>(p.dy, a.y, b, h), a.y.row, qt * kTile, a.T);
    cp_async_commit();
    const std::int64_t rows = static_cast<std::int64_t>(b * a.NH + h) * a.T;
    for (int r = threadIdx.x; r < kTile; r += kThreads) {
      const int t = qt * kTile + r;
      sstat[buf][r] = t < a.T ? p.stats[rows + t] : 0.0f;
      sdot[buf][r] = t < a.T ? p.dot[rows + t] : 0.0f;
    }
  };

  std::uint32_t ka[4][4], va[4][4];
  {  // this warp's keys and values as A fragments, through buffer 1
    load_tile<S>(sq[1], head_of<S>(p.k, a.k, b, hk), a.k.row, kt * kTile, a.T);
    load_tile<S>(sdy[1], head_of<S>(p.v, a.v, b, hk), a.v.row, kt * kTile, a.T);
    __syncthreads();
    load_a<S>(ka, sq[1], warp * 16);
    load_a<S>(va, sdy[1], warp * 16);
  }
  issue(0);
  float dk[8][4] = {}, dv[8][4] = {};
  for (int i = 0; i < steps; ++i) {
    const int qt = kt + i % span, buf = i % 2;
    if (i + 1 < steps) {
      if (i == 0) __syncthreads();  // buffer 1 held k and v until every warp took its fragments
      issue(i + 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    // P^T (this warp's 16 keys x 64 queries) from the recomputed scores.
    float pt[8][4], dpt[8][4];
    product_with_rows<S>(pt, ka, sq[buf]);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = nt * 8 + c + (e & 1), query = qt * kTile + col, key = key0 + g + (e < 2 ? 0 : 8);
        pt[nt][e] = key <= query && query < a.T ? exp2f(pt[nt][e] * scale_log2 - sstat[buf][col]) : 0.0f;
      }
    accumulate_with_tile<S>(dv, pt, sdy[buf]);  // dv += P^T dy
    product_with_rows<S>(dpt, va, sdy[buf]);    // dP^T = v dy^T
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) dpt[nt][e] = pt[nt][e] * (dpt[nt][e] - sdot[buf][nt * 8 + c + (e & 1)]);
    accumulate_with_tile<S>(dk, dpt, sq[buf]);  // dk += dS^T q (times the scale, below)
    __syncthreads();
  }
  store_rows<S>(head_of<S>(p.dk, a.k, b, hk), a.k.row, key0, a.T, dk, scale, scale);
  store_rows<S>(head_of<S>(p.dv, a.v, b, hk), a.v.row, key0, a.T, dv, 1.0f, 1.0f);
}

// dq of 64 query rows: over the key tiles at or before them.
template <typename S>
__global__ void __launch_bounds__(kThreads) flash_dq_kernel(FlashAttention a, Pointers p, float scale_log2,
                                                            float scale) {
  __shared__ __align__(16) Tile<S> sk[2], sv[2];  // keys and values double-buffered
  const int bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH, hk = h / a.group;
  const int tiles = (a.T + kTile - 1) / kTile;
  const int qt = tiles - 1 - static_cast<int>(blockIdx.y);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = 2 * (lane % 4);
  const int row0 = qt * kTile + warp * 16;

  std::uint32_t qa[4][4], dya[4][4];
  {
    load_tile<S>(sk[1], head_of<S>(p.q, a.q, b, h), a.q.row, qt * kTile, a.T);
    load_tile<S>(sv[1], head_of<S>(p.dy, a.y, b, h), a.y.row, qt * kTile, a.T);
    __syncthreads();
    load_a<S>(qa, sk[1], warp * 16);
    load_a<S>(dya, sv[1], warp * 16);
  }
  const std::int64_t srow = static_cast<std::int64_t>(bh) * a.T;
  const float st0 = row0 + g < a.T ? p.stats[srow + row0 + g] : 0.0f;
  const float st1 = row0 + g + 8 < a.T ? p.stats[srow + row0 + g + 8] : 0.0f;
  const float dot0 = row0 + g < a.T ? p.dot[srow + row0 + g] : 0.0f;
  const float dot1 = row0 + g + 8 < a.T ? p.dot[srow + row0 + g + 8] : 0.0f;
  const S* k = head_of<S>(p.k, a.k, b, hk);
  const S* v = head_of<S>(p.v, a.v, b, hk);
  float dq[8][4] = {};
  issue_tile<S>(sk[0], k, a.k.row, 0, a.T);
  issue_tile<S>(sv[0], v, a.v.row, 0, a.T);
  cp_async_commit();
  for (int kt = 0; kt <= qt; ++kt) {
    const int buf = kt % 2;
    if (kt == 0 && qt > 0) __syncthreads();  // buffer 1 held q and dy until every warp took its fragments
    next_key_value_tiles<S>(sk, sv, k, v, a, kt, qt);
    __syncthreads();
    float pr[8][4], dp[8][4];
    product_with_rows<S>(pr, qa, sk[buf]);  // scores
    product_with_rows<S>(dp, dya, sv[buf]);  // dP = dy v^T
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = kt * kTile + nt * 8 + c + (e & 1), row = row0 + g + (e < 2 ? 0 : 8);
        const float prob = key <= row && key < a.T ? exp2f(pr[nt][e] * scale_log2 - (e < 2 ? st0 : st1)) : 0.0f;
        pr[nt][e] = prob * (dp[nt][e] - (e < 2 ? dot0 : dot1));  // dS
      }
    accumulate_with_tile<S>(dq, pr, sk[buf]);  // dq += dS k
    __syncthreads();
  }
  store_rows<S>(head_of<S>(p.dq, a.q, b, h), a.q.row, row0, a.T, dq, scale, scale);
}

template <typename S> void launch_forward(const FlashAttention& a, const Pointers& p, cudaStream_t s) {
  const FlashGrid grid = flash_attention_grid(a.B * a.NH, a.T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kD));
  flash_forward_kernel<S><<<dim3(grid.x, grid.y), kThreads, 0, s>>>(a, p, scale * kLog2e);
}

template <typename S> void launch_backward(const FlashAttention& a, const Pointers& p, cudaStream_t s) {
  const FlashGrid grid = flash_attention_grid(a.B * a.NH, a.T);
  const FlashGrid kv_grid = flash_attention_grid(a.B * (a.NH / a.group), a.T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kD));
  flash_dot_kernel<S><<<blocks_for(static_cast<std::size_t>(a.B) * a.NH * a.T * 32, kThreads), kThreads, 0, s>>>(a, p);
  flash_dkdv_kernel<S><<<dim3(kv_grid.x, kv_grid.y), kThreads, 0, s>>>(a, p, scale * kLog2e, scale);
  flash_dq_kernel<S><<<dim3(grid.x, grid.y), kThreads, 0, s>>>(a, p, scale * kLog2e, scale);
}

// Every stride a multiple of 8 elements and every base 16-byte aligned: tiles move 16 bytes at a time.
bool aligned(const FlashAttention& a, std::initializer_list<const void*> pointers) {
  for (const HeadsLayout& l : {a.q, a.k, a.v, a.y})
    if (l.batch % 8 != 0 || l.head % 8 != 0 || l.row % 8 != 0) return false;
  for (const void* p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

void check(const FlashAttention& a, DType dt, std::initializer_list<const void*> pointers) {
  if (!flash_attention_supported(dt, kD, aligned(a, pointers) ? 8 : 1) || a.B < 1 || a.NH < 1 || a.T < 1 ||
      a.group < 1 || a.NH % a.group != 0 ||
      static_cast<std::int64_t>(a.T) > static_cast<std::int64_t>(kMaxGridY) * kTile)
    throw std::invalid_argument("flash attention: unsupported case (dtype, head size, alignment or shape)");
}
}  // namespace

void flash_attention_forward(const FlashAttention& a, const void* q, const void* k, const void* v, void* y,
                             float* stats, DType dt, cudaStream_t s) {
  check(a, dt, {q, k, v, y});
  Pointers p{q, k, v, nullptr, nullptr, stats, nullptr, y, nullptr, nullptr, nullptr};
  if (dt == DType::bf16) launch_forward<__nv_bfloat16>(a, p, s);
  else launch_forward<__half>(a, p, s);
  check_launch();
}

void flash_attention_backward(const FlashAttention& a, const void* q, const void* k, const void* v, const void* y,
                              const void* dy, const float* stats, float* scratch, void* dq, void* dk, void* dv,
                              DType dt, cudaStream_t s) {
  check(a, dt, {q, k, v, y, dy, dq, dk, dv});
  // Backward only reads the statistics; Pointers holds one non-const field for both passes.
  Pointers p{q, k, v, y, dy, const_cast<float*>(stats), scratch, nullptr, dq, dk, dv};
  if (dt == DType::bf16) launch_backward<__nv_bfloat16>(a, p, s);
  else launch_backward<__half>(a, p, s);
  check_launch();
}

bool flash_attention_runs(std::initializer_list<const void*> views, std::size_t att_numel, std::size_t scratch_numel,
                          std::size_t materialised_att, std::size_t materialised_scratch, const char* op) {
  bool aligned16 = true;
  for (const void* p : views) aligned16 = aligned16 && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  if (aligned16) return true;
  if (att_numel < materialised_att || scratch_numel < materialised_scratch)
    throw std::invalid_argument(std::string(op) + ": views that are not 16-byte aligned take the materialised path, "
                                "and att or scratch is sized for the flash path only");
  return false;
}

void require_flash_backward_aligned(std::initializer_list<const void*> views, const char* op) {
  for (const void* p : views)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
      throw std::invalid_argument(std::string(op) + " backward: dqkv, dout and scratch must be 16-byte aligned when "
                                  "forward took the flash path");
}

}  // namespace zt::models::cuda
