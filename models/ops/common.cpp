#include "models/ops/common.h"

#include <stdexcept>
#include <string>

#include "core/device_ops.h"

namespace zt::models::ops {

std::int32_t* int32_view(const BufferView& view) {
  if (view.dtype != DType::i32)
    throw std::invalid_argument(std::string("integer data needs an i32 view, not ") + std::string(dtype_name(view.dtype)));
  return static_cast<std::int32_t*>(view.data);
}

void copy(ComputeContext& ctx, BufferView dst, BufferView src) {
  if (dst.bytes() != src.bytes()) throw std::invalid_argument("ops::copy: sizes differ");
  copy_async(dst, src, ctx.stream());
}

void fill_zero(ComputeContext& ctx, BufferView dst) { zt::fill_zero(dst, ctx.stream()); }

}  // namespace zt::models::ops
