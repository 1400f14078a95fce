// What every op checks before it runs (ops/<op>.cpp): a view must be on the context's device, of
// the dtype and at least `numel` elements long. Throws std::invalid_argument naming the view.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <stdexcept>

#include "core/buffer.h"
#include "models/compute_context.h"

namespace zt::models::ops::detail {

inline void check(const ComputeContext& ctx, const BufferView& v, DType dtype, std::size_t numel, const char* what) {
  if (!(v.device == ctx.device()))
    throw std::invalid_argument(fmt::format("{}: view on {} given to a {} context", what, v.device.str(),
                                            ctx.device().str()));
  if (v.dtype != dtype)
    throw std::invalid_argument(fmt::format("{}: view of dtype {}, expected {}", what, dtype_name(v.dtype),
                                            dtype_name(dtype)));
  if (v.numel < numel)
    throw std::invalid_argument(fmt::format("{}: view of {} elements, needs {}", what, v.numel, numel));
}

// An activation (or parameter) view: the context's compute dtype.
inline void check_act(const ComputeContext& ctx, const BufferView& v, std::size_t numel, const char* what) {
  check(ctx, v, ctx.dtype(), numel, what);
}

inline std::size_t sz(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }

}  // namespace zt::models::ops::detail
