// Every byte codec that reads store bytes: blosc, zlib, gzip, zstd, numcodecs-lz4, LZ4 frames,
// lz4-java LZ4Block streams, vlen-utf8. The first byte picks the codec.
#include <string_view>

#include "codec/compression.h"
#include "codec/lz4.h"
#include "codec/vlen_utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace omicsfs::codec;
  if (size < 2) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data + 2), size - 2);
  const size_t cap = 1 << 20, expect = data[1] * 64;
  switch (data[0] % 8) {
    case 0:
      (void)BloscDecode(in, cap);
      break;
    case 1:
      (void)ZlibDecode(in, ZlibFormat::kZlib, cap);
      break;
    case 2:
      (void)ZlibDecode(in, ZlibFormat::kGzip, cap);
      break;
    case 3:
      (void)ZstdDecode(in, cap);
      break;
    case 4:
      (void)Lz4PrefixedDecode(in, cap);
      break;
    case 5:
      (void)Lz4FrameDecode(in, expect);
      break;
    case 6:
      (void)Lz4BlockStreamDecode(in, expect);
      break;
    case 7:
      (void)VlenUtf8Decode(in, data[1]);
      break;
  }
  return 0;
}
