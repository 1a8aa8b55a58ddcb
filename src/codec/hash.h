// A fast 64-bit content hash (XXH3) for checksums of derived data the daemon writes itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace omicsfs::codec {

uint64_t Hash64(const void* data, size_t size);
// Hash64 of the pieces' concatenation, without making it.
uint64_t Hash64(std::initializer_list<std::string_view> pieces);

}  // namespace omicsfs::codec
