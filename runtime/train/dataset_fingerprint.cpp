#include "runtime/train/dataset_fingerprint.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"
#include "runtime/data/shard_files.h"

namespace zt {
namespace {

std::uint32_t crc_of_range(std::ifstream& in, const std::string& path, std::uint64_t offset, std::uint64_t count,
                           std::uint32_t crc) {
  std::vector<char> bytes(count);
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(bytes.data(), static_cast<std::streamsize>(count));
  if (static_cast<std::uint64_t>(in.gcount()) != count)
    throw UserError(fmt::format("{}: could not read {} bytes at offset {} to compare the data across ranks", path,
                                count, offset));
  return static_cast<std::uint32_t>(
      ::crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

DataFileDigest digest_file(const std::filesystem::path& file) {
  DataFileDigest digest;
  digest.path = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot open it: {}", digest.path, std::strerror(errno)));
  in.seekg(0, std::ios::end);
  digest.bytes = static_cast<std::uint64_t>(in.tellg());
  std::uint32_t crc = static_cast<std::uint32_t>(::crc32(0, nullptr, 0));
  if (digest.bytes <= 2 * kDigestEdgeBytes) {
    crc = crc_of_range(in, digest.path, 0, digest.bytes, crc);
  } else {
    crc = crc_of_range(in, digest.path, 0, kDigestEdgeBytes, crc);
    crc = crc_of_range(in, digest.path, digest.bytes - kDigestEdgeBytes, kDigestEdgeBytes, crc);
  }
  digest.crc32 = crc;
  return digest;
}

}  // namespace

std::vector<DataFileDigest> digest_data_files(const std::string& pattern) {
  std::vector<DataFileDigest> digests;
  for (const std::filesystem::path& file : data::expand_shard_pattern(pattern)) digests.push_back(digest_file(file));
  return digests;
}

}  // namespace zt
