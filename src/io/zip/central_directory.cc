#include "io/zip/central_directory.h"

#include <algorithm>

namespace omicsfs::io::zip {
namespace {

constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kEnd64Signature = 0x06064b50;
constexpr uint32_t kLocator64Signature = 0x07064b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr size_t kEndSize = 22;
constexpr size_t kLocator64Size = 20;
constexpr size_t kEnd64Size = 56;
constexpr size_t kCentralSize = 46;
// The end record, a comment of at most 65 535 bytes after it, and the ZIP64 locator and record
// before it: where an end record can lie. libzip reads the same window on open, so one read
// serves both parsers; for an archive without a comment the central directory usually lies in
// it too.
constexpr uint64_t kTailBytes = 65535 + kEndSize + kLocator64Size + kEnd64Size;

uint16_t Le16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8);
}
uint32_t Le32(std::string_view b, size_t at) {
  return Le16(b, at) | static_cast<uint32_t>(Le16(b, at + 2)) << 16;
}
uint64_t Le64(std::string_view b, size_t at) {
  return Le32(b, at) | static_cast<uint64_t>(Le32(b, at + 4)) << 32;
}

// What the end records say (the ZIP64 values where the classic ones are saturated).
struct EndRecord {
  uint64_t entries = 0;
  uint64_t cd_size = 0;
  uint64_t cd_offset = 0;
  uint64_t end = 0;  // where the end records begin: the central directory ends before
};

// The bytes [offset, offset + length) of the archive, from `span` when it holds them.
Result<std::string> ReadRange(const ByteSource& archive, const ArchiveSpan& span, uint64_t offset,
                              uint64_t length) {
  if (offset >= span.offset && offset - span.offset + length <= span.bytes.size()) {
    return span.bytes.substr(offset - span.offset, length);
  }
  std::string out(length, '\0');
  RETURN_IF_ERROR(archive.ReadExact(offset, out.data(), out.size()));
  return out;
}

// The classic end record: the one whose comment ends the archive, as the format has it; else
// (bytes appended after the archive) the one nearest the end whose comment fits. A comment may
// hold the signature itself, so the first rule matters; libzip's parse checks the choice.
std::optional<size_t> FindEndRecord(std::string_view tail) {
  if (tail.size() < kEndSize) return std::nullopt;
  std::optional<size_t> fits;
  for (size_t at = tail.size() - kEndSize + 1; at-- > 0;) {
    if (Le32(tail, at) != kEndSignature) continue;
    const size_t end = at + kEndSize + Le16(tail, at + 20);
    if (end == tail.size()) return at;
    if (end < tail.size() && !fits) fits = at;
  }
  return fits;
}

// The ZIP64 end record the locator before the classic one points to.
Status ReadEnd64(const ByteSource& archive, const ArchiveSpan& tail, uint64_t locator,
                 EndRecord* end) {
  const std::string& where = archive.Describe();
  ASSIGN_OR_RETURN(std::string loc, ReadRange(archive, tail, locator, kLocator64Size));
  const uint64_t at = Le64(loc, 8);
  if (Le32(loc, 4) != 0 || Le32(loc, 16) > 1) {
    return UnsupportedError(where + ": a zip archive on several disks");
  }
  if (at > locator || locator - at < kEnd64Size) {
    return CorruptError(where + ": the ZIP64 end record's offset " + std::to_string(at) +
                        " lies past its locator");
  }
  ASSIGN_OR_RETURN(std::string rec, ReadRange(archive, tail, at, kEnd64Size));
  if (Le32(rec, 0) != kEnd64Signature) {
    return CorruptError(where + ": no ZIP64 end record at offset " + std::to_string(at));
  }
  if (Le32(rec, 16) != 0 || Le32(rec, 20) != 0 || Le64(rec, 24) != Le64(rec, 32)) {
    return UnsupportedError(where + ": a zip archive on several disks");
  }
  end->entries = Le64(rec, 32);
  end->cd_size = Le64(rec, 40);
  end->cd_offset = Le64(rec, 48);
  end->end = at;
  return OkStatus();
}

Result<EndRecord> ParseEnd(const ByteSource& archive, const ArchiveSpan& tail) {
  const std::string& where = archive.Describe();
  const std::optional<size_t> found = FindEndRecord(tail.bytes);
  if (!found) {
    return CorruptError(where +
                        ": not a zip archive, or truncated (no end of central directory "
                        "record in its last " +
                        std::to_string(tail.bytes.size()) + " bytes)");
  }
  const std::string_view rec = std::string_view(tail.bytes).substr(*found, kEndSize);
  if (Le16(rec, 4) != 0 || Le16(rec, 6) != 0 || Le16(rec, 8) != Le16(rec, 10)) {
    return UnsupportedError(where + ": a zip archive on several disks");
  }
  EndRecord end{Le16(rec, 10), Le32(rec, 12), Le32(rec, 16), tail.offset + *found};
  if (end.end >= kLocator64Size) {
    const uint64_t locator = end.end - kLocator64Size;
    ASSIGN_OR_RETURN(std::string sig, ReadRange(archive, tail, locator, 4));
    if (Le32(sig, 0) == kLocator64Signature) {
      RETURN_IF_ERROR(ReadEnd64(archive, tail, locator, &end));
    }
  }
  if (end.cd_offset > end.end || end.cd_size > end.end - end.cd_offset) {
    return CorruptError(where + ": its central directory (" + std::to_string(end.cd_size) +
                        " bytes at " + std::to_string(end.cd_offset) +
                        ") does not lie before its end record at " + std::to_string(end.end) +
                        " (truncated, or data before the archive)");
  }
  if (end.cd_size > kMaxCentralDirectory) {
    return UnsupportedError(where + ": a central directory of " + std::to_string(end.cd_size) +
                            " bytes is more than the " + std::to_string(kMaxCentralDirectory) +
                            " accepted");
  }
  if (end.entries > end.cd_size / kCentralSize) {
    return CorruptError(where + ": " + std::to_string(end.entries) + " entries cannot fit in a " +
                        std::to_string(end.cd_size) + "-byte central directory");
  }
  return end;
}

// The ZIP64 (0x0001) and extended timestamp (0x5455) fields of one central record's extra
// field. ZIP64 holds, in this order, only the values saturated in the fixed part.
Status ParseExtra(std::string_view extra, uint32_t size32, CentralRecord* r) {
  for (size_t at = 0; at + 4 <= extra.size();) {
    const uint16_t id = Le16(extra, at);
    const size_t len = Le16(extra, at + 2);
    if (at + 4 + len > extra.size()) break;  // trailing padding some writers leave
    const std::string_view field = extra.substr(at + 4, len);
    if (id == 0x0001) {
      size_t pos = 0;
      auto next = [&](uint64_t* v) {
        if (pos + 8 > field.size()) return false;
        *v = Le64(field, pos);
        pos += 8;
        return true;
      };
      uint64_t ignored = 0;
      if ((size32 == UINT32_MAX && !next(&ignored)) ||
          (r->comp_size == UINT32_MAX && !next(&r->comp_size)) ||
          (r->header_offset == UINT32_MAX && !next(&r->header_offset))) {
        return CorruptError("its ZIP64 extra field is too short");
      }
    } else if (id == 0x5455 && len >= 5 && (field[0] & 1)) {
      r->unix_mtime = static_cast<int32_t>(Le32(field, 1));
    }
    at += 4 + len;
  }
  return OkStatus();
}

Result<std::vector<CentralRecord>> ParseRecords(std::string_view cd, uint64_t entries,
                                                const std::string& where) {
  std::vector<CentralRecord> out;
  out.reserve(entries);
  size_t at = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    auto bad = [&](const std::string& what) {
      return CorruptError(where + ": central directory record " + std::to_string(i) + " at +" +
                          std::to_string(at) + ": " + what);
    };
    if (cd.size() - at < kCentralSize || Le32(cd, at) != kCentralSignature) {
      return bad("no record signature (truncated or corrupt central directory)");
    }
    const size_t name_len = Le16(cd, at + 28);
    const size_t extra_len = Le16(cd, at + 30);
    const size_t total = kCentralSize + name_len + extra_len + Le16(cd, at + 32);
    if (cd.size() - at < total) return bad("runs past the central directory's end");
    CentralRecord r;
    r.raw_name.assign(cd.substr(at + kCentralSize, name_len));
    r.comp_size = Le32(cd, at + 20);
    r.header_offset = Le32(cd, at + 42);
    const Status st =
        ParseExtra(cd.substr(at + kCentralSize + name_len, extra_len), Le32(cd, at + 24), &r);
    if (!st.ok()) return bad(st.message());
    out.push_back(std::move(r));
    at += total;
  }
  return out;
}

}  // namespace

Result<CentralDirectory> ReadCentralDirectory(const ByteSource& archive) {
  const uint64_t size = archive.Size();
  ArchiveSpan tail;
  tail.offset = size - std::min(size, kTailBytes);
  tail.bytes.resize(size - tail.offset);
  RETURN_IF_ERROR(archive.ReadExact(tail.offset, tail.bytes.data(), tail.bytes.size()));
  ASSIGN_OR_RETURN(EndRecord end, ParseEnd(archive, tail));
  CentralDirectory dir;
  dir.offset = end.cd_offset;
  ASSIGN_OR_RETURN(std::string cd, ReadRange(archive, tail, end.cd_offset, end.cd_size));
  ASSIGN_OR_RETURN(dir.records, ParseRecords(cd, end.entries, archive.Describe()));
  const bool in_tail = end.cd_offset >= tail.offset;
  dir.spans.push_back(std::move(tail));
  if (!in_tail) dir.spans.push_back(ArchiveSpan{end.cd_offset, std::move(cd)});
  return dir;
}

Result<uint64_t> ParseLocalHeader(std::string_view head, uint64_t header_offset,
                                  std::string_view raw_name, const std::string& where) {
  const uint64_t length = kLocalHeaderSize + raw_name.size();
  if (head.size() < length || Le32(head, 0) != kLocalSignature) {
    return CorruptError(where + ": no local header at offset " + std::to_string(header_offset));
  }
  if (Le16(head, 26) != raw_name.size() ||
      head.substr(kLocalHeaderSize, raw_name.size()) != raw_name) {
    return CorruptError(where + ": the local header at offset " + std::to_string(header_offset) +
                        " names another entry");
  }
  return header_offset + length + Le16(head, 28);
}

Result<uint64_t> ReadDataOffset(const ByteSource& archive, uint64_t header_offset,
                                std::string_view raw_name, const std::string& where) {
  const uint64_t length = kLocalHeaderSize + raw_name.size();
  if (header_offset > archive.Size() || archive.Size() - header_offset < length) {
    return CorruptError(where + ": its local header at " + std::to_string(header_offset) +
                        " lies past the archive's end");
  }
  std::string head(length, '\0');
  RETURN_IF_ERROR_CTX(archive.ReadExact(header_offset, head.data(), head.size()), where);
  return ParseLocalHeader(head, header_offset, raw_name, where);
}

}  // namespace omicsfs::io::zip
