// What a rank's training data looks like, cheaply: the files a glob names, their sizes and a
// CRC32 of their first and last MiB (the whole file when it is at most 2 MiB). Two ranks whose
// fingerprints agree read the same bytes with near certainty for any realistic mistake (another
// copy of the data, a file re-prepared with another tokenizer, a truncated copy), at the cost of
// reading 2 MiB per file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zt {

struct DataFileDigest {
  std::string path;  // as the glob gives it
  std::uint64_t bytes = 0;
  std::uint32_t crc32 = 0;  // of the first and last kDigestEdgeBytes
  bool operator==(const DataFileDigest&) const = default;
};

inline constexpr std::uint64_t kDigestEdgeBytes = 1 << 20;

// Digests of the files matching `pattern`, sorted by name. Throws zt::UserError when nothing
// matches or a file cannot be read.
std::vector<DataFileDigest> digest_data_files(const std::string& pattern);

}  // namespace zt
