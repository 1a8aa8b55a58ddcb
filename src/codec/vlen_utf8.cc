#include "codec/vlen_utf8.h"

#include <cstring>

namespace omicsfs::codec {

Result<std::vector<std::string>> VlenUtf8Decode(std::string_view in, size_t expected_items) {
  auto u32 = [&](size_t pos) {
    uint32_t v;
    std::memcpy(&v, in.data() + pos, 4);
    return v;
  };
  if (in.size() < 4) return CorruptError("vlen-utf8: missing the item count");
  const uint32_t n = u32(0);
  if (n != expected_items) {
    return CorruptError("vlen-utf8: " + std::to_string(n) + " items, expected " +
                        std::to_string(expected_items));
  }
  std::vector<std::string> out;
  out.reserve(n);
  size_t pos = 4;
  for (uint32_t i = 0; i < n; ++i) {
    if (in.size() - pos < 4)
      return CorruptError("vlen-utf8: truncated at item " + std::to_string(i));
    uint32_t len = u32(pos);
    pos += 4;
    if (in.size() - pos < len)
      return CorruptError("vlen-utf8: item " + std::to_string(i) + " runs past the end");
    out.emplace_back(in.data() + pos, len);
    pos += len;
  }
  if (pos != in.size())
    return CorruptError("vlen-utf8: " + std::to_string(in.size() - pos) + " trailing bytes");
  return out;
}

}  // namespace omicsfs::codec
