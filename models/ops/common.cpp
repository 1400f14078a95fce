#include "models/ops/common.h"

#include <stdexcept>

#include "core/device_ops.h"

namespace zt::models::ops {

std::int32_t* int32_view(const BufferView& view) {
  if (dtype_size(view.dtype) != 4) throw std::invalid_argument("int32 data needs a 4-byte buffer");
  return static_cast<std::int32_t*>(view.data);
}

void copy(ComputeContext& ctx, BufferView dst, BufferView src) {
  if (dst.bytes() != src.bytes()) throw std::invalid_argument("ops::copy: sizes differ");
  copy_async(dst, src, ctx.stream());
}

void fill_zero(ComputeContext& ctx, BufferView dst) { zt::fill_zero(dst, ctx.stream()); }

}  // namespace zt::models::ops
