#include "runtime/plot/scratch_directory.h"

#include <stdlib.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace zt::plot {

ScratchDirectory::ScratchDirectory(std::string_view prefix) {
  std::string name = (std::filesystem::temp_directory_path() / prefix).string() + "-XXXXXX";
  if (mkdtemp(name.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "cannot create a temporary directory like " + name);
  path_ = name;
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;  // a leftover temp file is not worth failing for
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace zt::plot
