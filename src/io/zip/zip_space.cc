#include "io/zip/zip_space.h"

#include <zip.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>

#include "codec/bgzf.h"
#include "codec/compression.h"
#include "io/zip/central_directory.h"

namespace omicsfs::io {
namespace {

constexpr uint16_t kStored = 0;    // ZIP_CM_STORE
constexpr uint16_t kDeflated = 8;  // ZIP_CM_DEFLATE
// Deflate's best case: a 258-byte match in two bits, 1032:1. An entry claiming more than that
// of its compressed size is refused before its buffer is allocated (zip bombs, fuzzed sizes).
constexpr uint64_t kMaxDeflateRatio = 1032;

// ---------------------------------------------------------------------------------------------
// libzip over a ByteSource: a zip_source_function whose reads are positional reads of the
// archive, served from the spans the central directory reader already holds when they cover
// them. libzip is used only while the space is opened, from one thread: it parses the central
// directory, and the parse is kept; no zip_t outlives OpenZipSpace.

// Outlives the zip_t whose source it backs (libzip calls it until zip_discard).
struct SourceState {
  SourceState(const ByteSource* a, const std::vector<zip::ArchiveSpan>* s) : archive(a), spans(s) {
    zip_error_init(&error);
  }
  ~SourceState() { zip_error_fini(&error); }
  SourceState(const SourceState&) = delete;
  SourceState& operator=(const SourceState&) = delete;

  const ByteSource* archive;
  const std::vector<zip::ArchiveSpan>* spans;
  uint64_t pos = 0;
  zip_error_t error;
  Status failure;  // the archive's own error (ESTALE, EIO), reported instead of libzip's

  zip_int64_t Read(void* out, zip_uint64_t len) {
    const uint64_t size = archive->Size();
    const uint64_t n = std::min<uint64_t>(len, size - std::min(pos, size));
    for (const zip::ArchiveSpan& s : *spans) {
      if (pos >= s.offset && pos - s.offset + n <= s.bytes.size()) {
        std::memcpy(out, s.bytes.data() + (pos - s.offset), n);
        pos += n;
        return static_cast<zip_int64_t>(n);
      }
    }
    Status st = archive->ReadExact(pos, out, n);
    if (!st.ok()) {
      zip_error_set(&error, ZIP_ER_READ, st.sys_errno());
      failure = std::move(st);
      return -1;
    }
    pos += n;
    return static_cast<zip_int64_t>(n);
  }

  zip_int64_t Stat(void* data, zip_uint64_t len) {
    zip_stat_t* st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &error);
    if (st == nullptr) return -1;
    zip_stat_init(st);
    st->size = archive->Size();
    st->mtime = archive->Info().mtime.tv_sec;
    st->valid |= ZIP_STAT_SIZE | ZIP_STAT_MTIME;
    return sizeof(*st);
  }
};

zip_int64_t SourceCallback(void* state, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
  auto* s = static_cast<SourceState*>(state);
  switch (cmd) {
    case ZIP_SOURCE_OPEN:
      s->pos = 0;
      return 0;
    case ZIP_SOURCE_READ:
      return s->Read(data, len);
    case ZIP_SOURCE_CLOSE:
    case ZIP_SOURCE_FREE:
      return 0;
    case ZIP_SOURCE_STAT:
      return s->Stat(data, len);
    case ZIP_SOURCE_ERROR:
      return zip_error_to_data(&s->error, data, len);
    case ZIP_SOURCE_SEEK: {
      const zip_int64_t to =
          zip_source_seek_compute_offset(s->pos, s->archive->Size(), data, len, &s->error);
      if (to < 0) return -1;
      s->pos = static_cast<uint64_t>(to);
      return 0;
    }
    case ZIP_SOURCE_TELL:
      return static_cast<zip_int64_t>(s->pos);
    case ZIP_SOURCE_ACCEPT_EMPTY:
      return 0;  // an empty file is not an empty store (libzip would open it as one)
    case ZIP_SOURCE_SUPPORTS:
      return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE,
                                            ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE,
                                            ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL, ZIP_SOURCE_SUPPORTS,
                                            ZIP_SOURCE_ACCEPT_EMPTY, -1);
    default:
      zip_error_set(&s->error, ZIP_ER_OPNOTSUPP, 0);
      return -1;
  }
}

struct ZipDiscard {
  void operator()(zip_t* za) const { zip_discard(za); }
};
using ZipHandle = std::unique_ptr<zip_t, ZipDiscard>;

Status FromZipError(const ByteSource& archive, zip_error_t* error) {
  const std::string message = archive.Describe() + ": " + zip_error_strerror(error);
  switch (zip_error_code_zip(error)) {
    case ZIP_ER_MULTIDISK:
      return UnsupportedError(message);
    case ZIP_ER_MEMORY:
      return Status(ErrorCode::kOutOfMemory, message);
    default:
      return CorruptError(message);
  }
}

Result<ZipHandle> OpenWithLibzip(SourceState* state) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* src = zip_source_function_create(SourceCallback, state, &error);
  zip_t* za = src == nullptr ? nullptr : zip_open_from_source(src, ZIP_RDONLY, &error);
  if (za == nullptr && src != nullptr) zip_source_free(src);
  Status st = za != nullptr          ? OkStatus()
              : !state->failure.ok() ? state->failure
                                     : FromZipError(*state->archive, &error);
  zip_error_fini(&error);
  if (!st.ok()) return st;
  return ZipHandle(za);
}

// ---------------------------------------------------------------------------------------------
// The index: what libzip parsed, with the local header offsets beside it.

struct Entry {
  uint64_t header_offset = 0;
  uint64_t comp_size = 0;
  uint64_t size = 0;
  uint32_t crc = 0;
  uint16_t method = 0;
  bool encrypted = false;
  struct timespec mtime {};
  std::string raw_name;  // the name as stored, when it is not the key (libzip decoded CP437)
  // Where the next entry's local header (or the central directory) begins: the entry's header,
  // data and data descriptor lie before it.
  uint64_t region_end = 0;
  // Where the data begins, read from the local header on first use; 0 until then (data never
  // begins at 0). Racing threads compute the same value.
  mutable std::atomic<uint64_t> data_offset{0};
};

struct ZipIndex {
  std::shared_ptr<const ByteSource> archive;
  uint64_t data_end = 0;  // the central directory's offset: every entry's data lies before
  std::map<std::string, Entry, std::less<>> files;
  std::map<std::string, struct timespec, std::less<>> dirs;  // explicit or implied by keys
};

void AddParents(ZipIndex* index, const std::string& key) {
  for (size_t slash = key.rfind('/'); slash != std::string::npos;
       slash = key.rfind('/', slash - 1)) {
    if (!index->dirs.try_emplace(key.substr(0, slash), index->archive->Info().mtime).second) return;
    if (slash == 0) return;
  }
}

// One libzip entry into the index, after checking it against the central directory reader's.
Status AddEntry(zip_t* za, zip_uint64_t i, const zip::CentralRecord& rec, ZipIndex* index) {
  const std::string& where = index->archive->Describe();
  zip_stat_t st;
  const char* raw = zip_get_name(za, i, ZIP_FL_ENC_RAW);
  if (zip_stat_index(za, i, 0, &st) != 0 || raw == nullptr || st.name == nullptr) {
    return CorruptError(where + ": entry " + std::to_string(i) + ": " + zip_strerror(za));
  }
  if (rec.raw_name != raw || rec.comp_size != st.comp_size) {
    return CorruptError(where + ": entry " + std::to_string(i) + " ('" + rec.raw_name +
                        "'): its central directory record reads two ways");
  }
  std::string key = st.name;
  const bool is_dir = !key.empty() && key.back() == '/';
  if (is_dir) key.pop_back();
  if (!ValidKey(key)) return OkStatus();  // no key can reach it: left out
  struct timespec mtime {
    rec.unix_mtime.value_or(st.mtime), 0
  };
  if (is_dir) {
    index->dirs[key] = mtime;
  } else {
    Entry& e = index->files[key];  // a name held twice: the last one, as Python's zipfile reads
    e.header_offset = rec.header_offset;
    e.comp_size = st.comp_size;
    e.size = st.size;
    e.crc = st.crc;
    e.method = st.comp_method;
    e.encrypted = st.encryption_method != ZIP_EM_NONE;
    e.mtime = mtime;
    e.raw_name = key == raw ? std::string() : std::string(raw);
    e.data_offset.store(0, std::memory_order_relaxed);
  }
  AddParents(index, key);
  return OkStatus();
}

Result<std::shared_ptr<const ZipIndex>> BuildIndex(std::shared_ptr<const ByteSource> archive,
                                                   const zip::CentralDirectory& cd, zip_t* za) {
  auto index = std::make_shared<ZipIndex>();
  index->archive = std::move(archive);
  index->data_end = cd.offset;
  const std::string& where = index->archive->Describe();
  const zip_int64_t n = zip_get_num_entries(za, 0);
  if (n < 0 || static_cast<uint64_t>(n) != cd.records.size()) {
    return CorruptError(where + ": libzip counts " + std::to_string(n) + " entries, its central " +
                        "directory " + std::to_string(cd.records.size()));
  }
  for (zip_uint64_t i = 0; i < cd.records.size(); ++i) {
    RETURN_IF_ERROR(AddEntry(za, i, cd.records[i], index.get()));
  }
  std::vector<uint64_t> starts;
  for (const zip::CentralRecord& r : cd.records) starts.push_back(r.header_offset);
  std::sort(starts.begin(), starts.end());
  for (auto& [key, e] : index->files) {
    if (index->dirs.count(key) != 0) {
      return CorruptError(where + ": '" + key + "' is both an entry and a directory");
    }
    auto next = std::upper_bound(starts.begin(), starts.end(), e.header_offset);
    e.region_end = std::min(next == starts.end() ? cd.offset : *next, cd.offset);
  }
  return std::shared_ptr<const ZipIndex>(std::move(index));
}

// ---------------------------------------------------------------------------------------------
// Entries.

std::string Hex32(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

ObjectInfo EntryInfo(const ZipIndex& index, const Entry& e) {
  ObjectInfo info;
  info.size = e.size;
  info.mtime = e.mtime;
  info.perm = index.archive->Info().perm;  // readable as the archive is
  info.stamp = index.archive->Info().stamp + " zip " + Hex32(e.crc) + " " + std::to_string(e.size);
  return info;
}

Status CheckCrc(const Entry& e, std::string_view bytes, const std::string& where) {
  const uint32_t crc = codec::bgzf::Crc32(0, bytes.data(), bytes.size());
  if (crc == e.crc) return OkStatus();
  return CorruptError(where + ": CRC-32 " + Hex32(crc) + " of its " + std::to_string(bytes.size()) +
                      " bytes, the archive records " + Hex32(e.crc));
}

// A stored entry: a window on the archive. Reads are the archive's reads, so they run in parallel
// and the archive's change check applies to each.
class StoredEntrySource : public ByteSource {
 public:
  StoredEntrySource(std::shared_ptr<const ZipIndex> index, const Entry* entry, uint64_t data,
                    std::string where)
      : index_(std::move(index)),
        entry_(entry),
        data_(data),
        where_(std::move(where)),
        info_(EntryInfo(*index_, *entry_)) {}
  const std::string& Describe() const override { return where_; }
  const ObjectInfo& Info() const override { return info_; }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override {
    if (offset > info_.size || length > info_.size - offset) {
      return CorruptError(where_ + ": bytes " + std::to_string(offset) + "+" +
                          std::to_string(length) + " lie past its end (" +
                          std::to_string(info_.size) + " bytes)");
    }
    RETURN_IF_ERROR_CTX(index_->archive->ReadExact(data_ + offset, out, length), where_);
    // Whole reads (ReadAll, Get) are checked; a part of an entry has no checksum of its own.
    if (offset == 0 && length == info_.size) {
      return CheckCrc(*entry_, std::string_view(static_cast<const char*>(out), length), where_);
    }
    return OkStatus();
  }

 private:
  std::shared_ptr<const ZipIndex> index_;
  const Entry* entry_;
  uint64_t data_;
  std::string where_;
  ObjectInfo info_;
};

// A deflated entry, inflated and checked when it was opened.
class InflatedEntrySource : public ByteSource {
 public:
  InflatedEntrySource(std::string where, ObjectInfo info, std::string bytes)
      : where_(std::move(where)), info_(std::move(info)), bytes_(std::move(bytes)) {}
  const std::string& Describe() const override { return where_; }
  const ObjectInfo& Info() const override { return info_; }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override {
    if (offset > bytes_.size() || length > bytes_.size() - offset) {
      return CorruptError(where_ + ": bytes " + std::to_string(offset) + "+" +
                          std::to_string(length) + " lie past its end (" +
                          std::to_string(bytes_.size()) + " bytes)");
    }
    if (length > 0) std::memcpy(out, bytes_.data() + offset, length);
    return OkStatus();
  }
  uint64_t ResidentBytes() const override { return bytes_.capacity(); }

 private:
  std::string where_;
  ObjectInfo info_;
  std::string bytes_;
};

// ---------------------------------------------------------------------------------------------
// The space.

class ZipSpace : public ByteSpace {
 public:
  explicit ZipSpace(std::shared_ptr<const ZipIndex> index) : index_(std::move(index)) {}
  const std::string& Describe() const override { return index_->archive->Describe(); }
  Result<std::shared_ptr<const ByteSource>> Open(const std::string& key) const override;
  Result<std::vector<ListEntry>> List(const std::string& prefix) const override;
  Result<std::optional<std::string>> Get(const std::string& key, uint64_t max_bytes) const override;

 private:
  const Entry* Find(const std::string& key) const {
    auto it = index_->files.find(key);
    return it == index_->files.end() ? nullptr : &it->second;
  }
  Status CheckReadable(const Entry& e, const std::string& where) const;
  Status CheckData(const Entry& e, uint64_t data, const std::string& key) const;
  Result<uint64_t> DataOffset(const Entry& e, const std::string& key) const;
  Result<std::string> ReadCompressed(const Entry& e, const std::string& key) const;
  Result<std::string> ReadWhole(const Entry& e, const std::string& key) const;

  std::shared_ptr<const ZipIndex> index_;
};

Status ZipSpace::CheckReadable(const Entry& e, const std::string& where) const {
  if (e.encrypted) return UnsupportedError(where + ": an encrypted zip entry");
  if (e.method != kStored && e.method != kDeflated) {
    return UnsupportedError(where + ": zip compression method " + std::to_string(e.method) +
                            " (only stored and deflated entries are read)");
  }
  if (e.method == kStored && e.comp_size != e.size) {
    return CorruptError(where + ": a stored entry of " + std::to_string(e.size) + " bytes takes " +
                        std::to_string(e.comp_size) + " in the archive");
  }
  if (e.method == kDeflated && e.size > kMaxInflatedEntry) {
    return UnsupportedError(where + ": a deflated entry of " + std::to_string(e.size) +
                            " bytes is more than the " + std::to_string(kMaxInflatedEntry) +
                            " inflated in memory");
  }
  if (e.method == kDeflated && e.size > e.comp_size * kMaxDeflateRatio + 1024) {
    return CorruptError(where + ": " + std::to_string(e.comp_size) + " deflated bytes cannot " +
                        "inflate to the " + std::to_string(e.size) + " recorded");
  }
  return OkStatus();
}

Status ZipSpace::CheckData(const Entry& e, uint64_t data, const std::string& key) const {
  if (data <= index_->data_end && e.comp_size <= index_->data_end - data) return OkStatus();
  return CorruptError(Where(key) + ": its " + std::to_string(e.comp_size) + " bytes at " +
                      std::to_string(data) + " run into the central directory at " +
                      std::to_string(index_->data_end));
}

Result<uint64_t> ZipSpace::DataOffset(const Entry& e, const std::string& key) const {
  uint64_t data = e.data_offset.load(std::memory_order_relaxed);
  if (data != 0) return data;
  ASSIGN_OR_RETURN(data, zip::ReadDataOffset(*index_->archive, e.header_offset,
                                             e.raw_name.empty() ? key : e.raw_name, Where(key)));
  RETURN_IF_ERROR(CheckData(e, data, key));
  e.data_offset.store(data, std::memory_order_relaxed);
  return data;
}

// The entry's bytes as the archive holds them, in one read of the archive (ByteSpace::Get is one
// request on a remote backend): until the data offset is known, the read starts at the local
// header and runs to where the next entry begins, when that is no more than the header's largest
// extra field and a data descriptor past the data. Otherwise the header is read first.
Result<std::string> ZipSpace::ReadCompressed(const Entry& e, const std::string& key) const {
  constexpr uint64_t kMaxSlack = 65535 + 24;  // a local extra field, a ZIP64 data descriptor
  const std::string where = Where(key);
  const std::string_view name = e.raw_name.empty() ? std::string_view(key) : e.raw_name;
  const uint64_t least = zip::kLocalHeaderSize + name.size() + e.comp_size;
  const uint64_t region = e.region_end - std::min(e.header_offset, e.region_end);
  if (e.data_offset.load(std::memory_order_relaxed) == 0 && region >= least &&
      region - least <= kMaxSlack) {
    std::string bytes(region, '\0');
    RETURN_IF_ERROR_CTX(index_->archive->ReadExact(e.header_offset, bytes.data(), region), where);
    ASSIGN_OR_RETURN(const uint64_t data,
                     zip::ParseLocalHeader(bytes, e.header_offset, name, where));
    const uint64_t skip = data - e.header_offset;
    if (skip > region || e.comp_size > region - skip) {
      return CorruptError(where + ": its " + std::to_string(e.comp_size) + " bytes at " +
                          std::to_string(data) + " run past where the next entry begins, at " +
                          std::to_string(e.region_end));
    }
    e.data_offset.store(data, std::memory_order_relaxed);
    bytes.erase(0, skip);
    bytes.resize(e.comp_size);
    return bytes;
  }
  ASSIGN_OR_RETURN(const uint64_t data, DataOffset(e, key));
  std::string bytes(e.comp_size, '\0');
  RETURN_IF_ERROR_CTX(index_->archive->ReadExact(data, bytes.data(), bytes.size()), where);
  return bytes;
}

// The whole entry, inflated when deflated, its CRC-32 checked.
Result<std::string> ZipSpace::ReadWhole(const Entry& e, const std::string& key) const {
  ASSIGN_OR_RETURN(std::string bytes, ReadCompressed(e, key));
  if (e.method == kDeflated) {
    auto inflated = codec::InflateRaw(bytes, e.size);
    if (!inflated.ok()) return std::move(inflated).status().WithContext(Where(key));
    bytes = std::move(inflated).value();
  }
  RETURN_IF_ERROR(CheckCrc(e, bytes, Where(key)));
  return bytes;
}

Result<std::shared_ptr<const ByteSource>> ZipSpace::Open(const std::string& key) const {
  RETURN_IF_ERROR(CheckKey(*this, key));
  const Entry* e = Find(key);
  if (e == nullptr) return std::shared_ptr<const ByteSource>();
  const std::string where = Where(key);
  RETURN_IF_ERROR(CheckReadable(*e, where));
  if (e->method == kStored) {
    ASSIGN_OR_RETURN(const uint64_t data, DataOffset(*e, key));
    return std::shared_ptr<const ByteSource>(
        std::make_shared<const StoredEntrySource>(index_, e, data, where));
  }
  ASSIGN_OR_RETURN(std::string bytes, ReadWhole(*e, key));
  return std::shared_ptr<const ByteSource>(
      std::make_shared<const InflatedEntrySource>(where, EntryInfo(*index_, *e), std::move(bytes)));
}

// Get reads the entry once into the string it returns (Open + ReadAll would copy a deflated one).
Result<std::optional<std::string>> ZipSpace::Get(const std::string& key, uint64_t max_bytes) const {
  RETURN_IF_ERROR(CheckKey(*this, key));
  const Entry* e = Find(key);
  if (e == nullptr) return std::optional<std::string>();
  const std::string where = Where(key);
  if (e->size > max_bytes) {
    return CorruptError(where + ": " + std::to_string(e->size) + " bytes is more than the " +
                        std::to_string(max_bytes) + " accepted for it");
  }
  RETURN_IF_ERROR(CheckReadable(*e, where));
  ASSIGN_OR_RETURN(std::string bytes, ReadWhole(*e, key));
  return std::optional<std::string>(std::move(bytes));
}

// The keys of `map` directly under `p` ("" or "dir/"), in order: a key further down stands for
// the child directory it lies in, and the rest of that subtree is skipped ('0' follows '/').
template <typename Map, typename Fn>
void ForChildren(const Map& map, const std::string& p, Fn&& fn) {
  auto it = map.lower_bound(p);
  while (it != map.end() && it->first.compare(0, p.size(), p) == 0) {
    const size_t slash = it->first.find('/', p.size());
    if (slash == std::string::npos) {
      fn(it->first.substr(p.size()), it->second);
      ++it;
    } else {
      it = map.lower_bound(it->first.substr(0, slash) + '0');
    }
  }
}

Result<std::vector<ListEntry>> ZipSpace::List(const std::string& prefix) const {
  if (!prefix.empty()) RETURN_IF_ERROR(CheckKey(*this, prefix));
  const std::string p = prefix.empty() ? std::string() : prefix + "/";
  std::vector<ListEntry> out;
  ForChildren(index_->files, p, [&](std::string name, const Entry& e) {
    out.push_back(ListEntry{std::move(name), EntryKind::kFile, EntryInfo(*index_, e)});
  });
  const ObjectInfo& archive = index_->archive->Info();
  ForChildren(index_->dirs, p, [&](std::string name, const struct timespec& mtime) {
    ObjectInfo info;
    info.mtime = mtime;
    info.perm = archive.perm;
    info.stamp = archive.stamp;
    out.push_back(ListEntry{std::move(name), EntryKind::kDirectory, std::move(info)});
  });
  std::sort(out.begin(), out.end(),
            [](const ListEntry& a, const ListEntry& b) { return a.name < b.name; });
  return out;
}

}  // namespace

Result<std::shared_ptr<const ByteSpace>> OpenZipSpace(std::shared_ptr<const ByteSource> archive) {
  ASSIGN_OR_RETURN(zip::CentralDirectory cd, zip::ReadCentralDirectory(*archive));
  SourceState state(archive.get(), &cd.spans);
  ASSIGN_OR_RETURN(ZipHandle za, OpenWithLibzip(&state));
  ASSIGN_OR_RETURN(std::shared_ptr<const ZipIndex> index,
                   BuildIndex(std::move(archive), cd, za.get()));
  return std::shared_ptr<const ByteSpace>(std::make_shared<const ZipSpace>(std::move(index)));
}

}  // namespace omicsfs::io
