#include "codec/hash.h"

#include <xxhash.h>

namespace omicsfs::codec {

uint64_t Hash64(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace omicsfs::codec
