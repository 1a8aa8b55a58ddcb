// A fast 64-bit content hash (XXH3) for checksums of derived data the daemon writes itself.
#pragma once

#include <cstddef>
#include <cstdint>

namespace omicsfs::codec {

uint64_t Hash64(const void* data, size_t size);

}  // namespace omicsfs::codec
