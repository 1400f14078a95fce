#include "runtime/train/dataset_fingerprint.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/error.h"
#include "runtime/data/shard_files.h"
#include "runtime/interop/hf_weights.h"

namespace zt {
namespace {

// Reads in large blocks: fewer system calls, and zlib's CRC32 is fastest on long runs.
constexpr std::size_t kReadBlockBytes = std::size_t{4} << 20;

DataFileDigest digest_file(const std::filesystem::path& file) {
  DataFileDigest digest;
  digest.path = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot open it: {}", digest.path, std::strerror(errno)));
  std::vector<char> block(kReadBlockBytes);
  auto crc = ::crc32(0, nullptr, 0);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(block.data()), static_cast<uInt>(got));
    digest.bytes += got;
  }
  if (in.bad())
    throw UserError(fmt::format("{}: read error at offset {} while comparing the data across ranks", digest.path,
                                digest.bytes));
  digest.crc32 = static_cast<std::uint32_t>(crc);
  return digest;
}

}  // namespace

std::vector<DataFileDigest> digest_init_from(const std::filesystem::path& init_from) {
  std::error_code error;
  const bool directory = std::filesystem::is_directory(init_from, error);
  // The file the run will load, with the same message when there is none as loading gives.
  const std::filesystem::path weights = interop::hf_weights_file(init_from);
  const std::filesystem::path config = (directory ? init_from : init_from.parent_path()) / "config.json";
  std::vector<DataFileDigest> digests;
  if (std::filesystem::is_regular_file(config, error)) digests.push_back(digest_file(config));
  // Anything but a regular file is named, never read (a named pipe would block the rank here).
  if (!std::filesystem::is_regular_file(weights, error))
    throw UserError(fmt::format("{}: not a regular file that can be read", weights.string()));
  digests.push_back(digest_file(weights));
  return digests;
}

std::vector<DataFileDigest> digest_data_files(const std::string& pattern) {
  std::vector<DataFileDigest> digests;
  for (const std::filesystem::path& file : data::expand_shard_pattern(pattern)) digests.push_back(digest_file(file));
  return digests;
}

}  // namespace zt
