#include "codec/hash.h"

#include <xxhash.h>

#include <new>

namespace omicsfs::codec {

uint64_t Hash64(const void* data, size_t size) { return XXH3_64bits(data, size); }

uint64_t Hash64(std::initializer_list<std::string_view> pieces) {
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(state);
  for (std::string_view p : pieces) XXH3_64bits_update(state, p.data(), p.size());
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return h;
}

}  // namespace omicsfs::codec
