// ZT_NCCL_CHECK(call): throws zt::CallError with NCCL's error string when call fails.
// ncclInProgress is not a failure: it is what non-blocking communicators return while an
// operation is still being set up.
#pragma once

#include <nccl.h>

#include "core/error.h"

namespace zt::detail {
inline void check_nccl(ncclResult_t code, const char* call, const char* file, int line) {
  if (code != ncclSuccess && code != ncclInProgress) throw_call_error("NCCL", call, file, line, ncclGetErrorString(code));
}
}  // namespace zt::detail

#define ZT_NCCL_CHECK(call) ::zt::detail::check_nccl((call), #call, __FILE__, __LINE__)

namespace zt {
// ncclGroupStart() .. ncclGroupEnd(): the group is closed even when a call inside throws, so that
// a failed launch does not leave every later NCCL call of the thread queued in an open group.
class NcclGroup {
 public:
  NcclGroup() { ZT_NCCL_CHECK(ncclGroupStart()); }
  ~NcclGroup() {
    if (open_) (void)ncclGroupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  void end() {
    open_ = false;
    ZT_NCCL_CHECK(ncclGroupEnd());
  }

 private:
  bool open_ = true;
};
}  // namespace zt
