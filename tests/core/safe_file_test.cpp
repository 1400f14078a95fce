// Atomic writes never replace what is not a regular file: a named pipe, a directory or a device
// node (such as /dev/null, which an export as root once replaced) at the target is refused, named,
// and left as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/safe_file.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

class SafeFileTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "zt-safe-file.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::string refusal(const fs::path& target) {
  try {
    write_file_atomically(target, "text");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST_F(SafeFileTest, ARegularFileIsReplacedWhole) {
  const fs::path target = dir_ / "out.txt";
  write_file_atomically(target, "old");
  write_file_atomically(target, "new");
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "new");
}

TEST_F(SafeFileTest, ANamedPipeIsRefusedAndStaysAPipe) {
  const fs::path target = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(target.c_str(), 0644), 0);
  const std::string message = refusal(target);
  EXPECT_NE(message.find(target.string() + ": is a named pipe"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(target)));
  // Nothing was left beside it either.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SafeFileTest, ADirectoryIsRefusedAndKept) {
  const fs::path target = dir_ / "sub";
  fs::create_directory(target);
  const std::string message = refusal(target);
  EXPECT_NE(message.find("is a directory"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_directory(target));
}

TEST_F(SafeFileTest, ADeviceNodeIsRefusedAndKept) {
  // A node like /dev/null, made in the test's own directory (root only), so that a regression
  // replaces nothing of the machine's.
  const fs::path target = dir_ / "null";
  if (::mknod(target.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "cannot make a device node here (needs root): " << std::strerror(errno);
  const std::string message = refusal(target);
  EXPECT_NE(message.find(target.string() + ": is a character device"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_character_file(fs::symlink_status(target)));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace zt
