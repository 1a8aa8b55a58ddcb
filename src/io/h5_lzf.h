// h5py's LZF filter (HDF5 filter 32000): LZF-compressed chunks, decoded here (Debian's libhdf5 has
// no LZF plugin). Registered with libhdf5 for reading, once per process, before any file opens.
#pragma once

#include <cstddef>

namespace omicsfs::io::h5 {

inline constexpr int kLzfFilter = 32000;

// Decodes the LZF block `in` into `out` (room for `capacity` bytes): the decoded size, or -1
// when the block is malformed or does not fit.
long LzfDecode(const unsigned char* in, size_t n, unsigned char* out, size_t capacity);

// Registers the decoding filter with libhdf5 (idempotent).
void RegisterLzf();

}  // namespace omicsfs::io::h5
