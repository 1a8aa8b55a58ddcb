// LZ4 containers used by datg: the LZ4 frame format (lz4frame API; content checksum verified)
// and lz4-java's legacy "LZ4Block" stream (21-byte chunk headers, raw or LZ4 chunks, masked
// XXH32 with seed 0x9747B28C). Both decode into an exactly expected size.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace omicsfs::codec {

// One LZ4 frame that must span `in` exactly and decode to exactly `expected` bytes.
Result<std::string> Lz4FrameDecode(std::string_view in, size_t expected);

// An LZ4Block stream (chunks up to and including the end chunk) that must span `in` exactly and
// decode to exactly `expected` bytes.
Result<std::string> Lz4BlockStreamDecode(std::string_view in, size_t expected);

}  // namespace omicsfs::codec
