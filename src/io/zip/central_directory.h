// The part of the zip format libzip does not expose: where each entry's data begins. libzip's
// zip_stat gives names, sizes, CRC-32, method and time, but not the offset of an entry's local
// header, and reading an entry through a zip_t serialises every reader on that handle. This is a
// minimal reader of the end records (ZIP64 included) and of the central directory, kept to
// offsets; libzip parses the same bytes for everything else, and the two are checked against each
// other (zip_space.cc). Pure parsing over a ByteSource: APPNOTE.TXT 6.3 §4.3 is the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/byte_source.h"
#include "util/status.h"

namespace omicsfs::io::zip {

// Refused above this: a central directory is ~80 bytes an entry, so 1 GiB is some 13 million
// entries, far past any store we mount, and it is held in memory while libzip parses it.
inline constexpr uint64_t kMaxCentralDirectory = uint64_t{1} << 30;

struct CentralRecord {
  std::string raw_name;               // the name's bytes as stored
  uint64_t comp_size = 0;             // ZIP64 extra field applied
  uint64_t header_offset = 0;         // the entry's local header
  std::optional<int64_t> unix_mtime;  // the extended timestamp (extra field 0x5455), if present
};

// Bytes of the archive read once, kept so that libzip's parse of them reads nothing again.
struct ArchiveSpan {
  uint64_t offset = 0;
  std::string bytes;
};

struct CentralDirectory {
  uint64_t offset = 0;  // where the central directory starts: every entry's data ends before it
  std::vector<CentralRecord> records;  // in central directory order (libzip's indexes)
  std::vector<ArchiveSpan> spans;      // the tail of the archive and the central directory
};

// Finds the end of central directory record (and the ZIP64 one it points to) in the archive's
// last 64 KiB and reads the central directory: two reads at most. Corrupt (naming the archive)
// when it is not a zip archive, is truncated, or spans several disks.
Result<CentralDirectory> ReadCentralDirectory(const ByteSource& archive);

// The fixed part of a local header; its name and extra field follow.
inline constexpr size_t kLocalHeaderSize = 30;

// Where the data of the entry whose local header was read at `header_offset` begins, from the
// header's first bytes (`head`: at least kLocalHeaderSize + raw_name.size() of them): after the
// fixed part, the name and the extra field, whose length may differ from the central
// directory's (the local ZIP64 field, alignment padding). Corrupt, naming `where`, when the
// header is not there or names another entry.
Result<uint64_t> ParseLocalHeader(std::string_view head, uint64_t header_offset,
                                  std::string_view raw_name, const std::string& where);

// The same, reading the header's fixed part and name from the archive (one read).
Result<uint64_t> ReadDataOffset(const ByteSource& archive, uint64_t header_offset,
                                std::string_view raw_name, const std::string& where);

}  // namespace omicsfs::io::zip
