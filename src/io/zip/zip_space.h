// The zip backend of the storage seam: a zip archive, read through another ByteSource (local,
// HTTP or S3), seen as the ByteSpace of its entries. `NAME.vcz.zip` as bio2zarr and zarr's
// ZipStore write it (the store's keys at the archive root, entries stored or deflated, ZIP64 or
// not) becomes the store `NAME.vcz/`.
//
// - Open reads the archive's tail and its central directory (two reads; the central directory is
//   parsed by libzip through a zip_source over the ByteSource), never the entries.
// - A stored entry is a sub-range of the archive: positional reads, no copy, any number of
//   threads. A deflated entry is inflated whole when it is opened and served from memory
//   (Zarr chunks are small); entries over kMaxInflatedEntry are refused.
// - CRC-32 is checked whenever a whole entry is read (every deflated entry; a stored entry read
//   in one piece, as Get does): a mismatch is Corrupt naming the archive and the entry, never
//   wrong bytes. Partial reads of a stored entry cannot be checked.
// - Change detection is the archive source's: a read of an archive changed since it was opened
//   fails with ESTALE, and an entry inflated at Open is read through it too.
// - Entries whose names are not keys (ValidKey: absolute, "..", empty components) cannot be
//   addressed and are left out. A name held twice is the last one, as Python's zipfile (and so
//   zarr's ZipStore) reads it.
#pragma once

#include <cstdint>
#include <memory>

#include "io/byte_source.h"
#include "util/status.h"

namespace omicsfs::io {

// The largest deflated entry inflated at Open (2 GiB, codec::kMaxDecodedBytes).
inline constexpr uint64_t kMaxInflatedEntry = uint64_t{1} << 31;

// The archive's entries as a ByteSpace (Describe(): the archive's). Corrupt naming the archive
// when it is not a zip archive, is truncated or its central directory is damaged; Unsupported for
// archives on several disks; the archive's own errors (ESTALE, I/O) as they are.
Result<std::shared_ptr<const ByteSpace>> OpenZipSpace(std::shared_ptr<const ByteSource> archive);

}  // namespace omicsfs::io
