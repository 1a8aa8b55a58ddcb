// numcodecs VLenUTF8 (also Zarr v3 "vlen-utf8"): u32 LE count, then per item a u32 LE byte
// length and the UTF-8 bytes. Bounds-checked.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace omicsfs::codec {

Result<std::vector<std::string>> VlenUtf8Decode(std::string_view in, size_t expected_items);

}  // namespace omicsfs::codec
