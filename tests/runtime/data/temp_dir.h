// A fresh directory under the system temp directory, removed with everything in it at scope end.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

namespace zt::data::testing {

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("zt_data_") + info->test_suite_name() + "_" + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

  std::filesystem::path write(std::string_view name, std::string_view content) const {
    const auto file = path_ / name;
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

 private:
  std::filesystem::path path_;
};

// Asserts that `statement` throws zt::UserError whose message contains every one of `parts`.
#define EXPECT_USER_ERROR(statement, ...)                                                     \
  do {                                                                                        \
    try {                                                                                     \
      statement;                                                                              \
      ADD_FAILURE() << "expected zt::UserError from " #statement;                             \
    } catch (const ::zt::UserError& error) {                                                  \
      for (const std::string_view part : std::initializer_list<std::string_view>{__VA_ARGS__}) { \
        EXPECT_NE(std::string_view(error.what()).find(part), std::string_view::npos)          \
            << "message \"" << error.what() << "\" lacks \"" << part << "\"";                \
      }                                                                                       \
    }                                                                                         \
  } while (false)

}  // namespace zt::data::testing
