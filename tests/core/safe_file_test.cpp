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

// /dev/stdout is a link to a terminal or a pipe: a link that stands for a device, a pipe or a
// directory is refused and kept; a link to a regular file (or to nothing) is itself replaced,
// leaving the file it pointed at as it was.
TEST_F(SafeFileTest, ALinkToAPipeIsRefusedAndALinkToAFileIsReplacedItself) {
  const fs::path pipe = dir_ / "pipe", to_pipe = dir_ / "to-pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0644), 0);
  fs::create_symlink(pipe, to_pipe);
  const std::string message = refusal(to_pipe);
  EXPECT_NE(message.find(to_pipe.string() + ": is a symbolic link to a named pipe"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_symlink(to_pipe));
  fs::create_directory_symlink(dir_, dir_ / "to-dir");
  EXPECT_NE(refusal(dir_ / "to-dir").find("is a symbolic link to a directory"), std::string::npos);

  const fs::path file = dir_ / "file.txt", to_file = dir_ / "to-file";
  write_file_atomically(file, "kept");
  fs::create_symlink(file, to_file);
  write_file_atomically(to_file, "new");
  EXPECT_FALSE(fs::is_symlink(to_file));
  std::ifstream kept(file), replaced(to_file);
  std::string a, b;
  std::getline(kept, a);
  std::getline(replaced, b);
  EXPECT_EQ(a, "kept");
  EXPECT_EQ(b, "new");
}

}  // namespace
}  // namespace zt
