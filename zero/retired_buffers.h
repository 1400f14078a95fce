// Buffers that are no longer needed but may still be read by work enqueued on a stream: each is
// freed once the stream has passed the point where it was retired, without blocking the host.
// On a CPU compute stream that point has always been passed, so the buffer goes at once.
#pragma once

#include <utility>
#include <vector>

#include "runtime/core/buffer.h"
#include "runtime/core/stream.h"

namespace zt {

class RetiredBuffers {
 public:
  void retire(Buffer buffer, Stream& stream) {
    retired_.emplace_back(std::move(buffer), stream.record());
    free_completed();
  }
  void free_completed() {
    std::erase_if(retired_, [](const auto& entry) { return entry.second.query(); });
  }

 private:
  std::vector<std::pair<Buffer, Event>> retired_;
};

}  // namespace zt
