// An HDF5 virtual file driver (libhdf5 1.10 VFL, read-only) whose reads go to an io::ByteSource:
// HDF5 files over S3 and HTTP read through the mount's block cache (io/cached_byte_source.h).
//
// Why our own driver: Debian's libhdf5 has ROS3, but it has no cache and makes a request per
// small read (field notes: a 6.4 KB file took 14 requests). Through the block cache a file below
// 1 MiB costs one ranged GET however many small reads libhdf5 makes.
//
// Reads are positional ByteSource::ReadExact calls; the end of file is the source's Size() (one
// version of the object, fixed when it was opened). A failed read (ESTALE: the object changed;
// EIO; Corrupt: past the end) fails the libhdf5 call that made it, never hands it other bytes; it
// is logged with the object's URL and the range, and kept for the calling thread
// (TakeVfdError) so the store reports the source's own error (ESTALE stays ESTALE).
#pragma once

#include <hdf5.h>

#include <memory>
#include <optional>

#include "io/byte_source.h"
#include "util/status.h"

namespace omicsfs::io::h5 {

// The driver's id, registered once (thread-safe); H5I_INVALID_HID when libhdf5 refused it.
hid_t ByteSourceDriver();

// A new file access property list whose driver reads `source` (the list and each copy of it hold
// the source; the file opened with it holds it until closed). The caller closes the list;
// H5I_INVALID_HID (the reason on libhdf5's error stack) when the driver cannot be set. The name
// given to H5Fopen is used only in libhdf5's messages.
hid_t MakeByteSourceFapl(std::shared_ptr<const ByteSource> source);

// The first read error the driver met on this thread since the last call (or ClearVfdError),
// and clears it. libhdf5 turns it into a generic "read failed"; this is the source's own status.
std::optional<Status> TakeVfdError();
void ClearVfdError();

}  // namespace omicsfs::io::h5
