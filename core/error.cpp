#include "core/error.h"

#include <fmt/format.h>

namespace zt {

CallError::CallError(std::string_view library, std::string_view call, const char* file, int line,
                     std::string_view library_message)
    : std::runtime_error(fmt::format("{} call failed: {} at {}:{}: {}", library, call, file, line, library_message)) {}

void throw_call_error(std::string_view library, std::string_view call, const char* file, int line,
                      std::string_view library_message) {
  throw CallError(library, call, file, line, library_message);
}

}  // namespace zt
