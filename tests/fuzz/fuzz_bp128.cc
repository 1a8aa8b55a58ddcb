// BP-128 block unpacking: any bit width, variant, start and word count.
#include <cstring>
#include <vector>

#include "codec/bp128.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace omicsfs::codec;
  if (size < 6) return 0;
  const int bits = static_cast<int8_t>(data[0]);
  const auto variant = static_cast<Bp128Variant>(data[1] % 4);
  uint32_t start;
  std::memcpy(&start, data + 2, 4);
  std::vector<uint32_t> words((size - 6) / 4);
  if (!words.empty()) std::memcpy(words.data(), data + 6, words.size() * 4);
  uint32_t out[128];
  (void)Bp128Unpack(words.data(), words.size(), bits, variant, start, out);
  return 0;
}
