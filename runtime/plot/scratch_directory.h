// A private directory under the system's temp directory, removed with everything in it when the
// object goes away.
#pragma once

#include <filesystem>
#include <string_view>

namespace zt::plot {

class ScratchDirectory {
 public:
  // prefix: the start of the directory's name, e.g. "zerotrain-plot".
  explicit ScratchDirectory(std::string_view prefix);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace zt::plot
