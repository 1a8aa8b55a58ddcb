#include "io/h5_lzf.h"

#include <hdf5.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace omicsfs::io::h5 {

// The LZF format: a control byte c; c < 32 is a literal run of c + 1 bytes; otherwise a
// back-reference of length (c >> 5) + 2 (a length field of 7 continues in the next byte, added)
// to the offset ((c & 31) << 8 | next byte) + 1 before the output's end.
long LzfDecode(const unsigned char* in, size_t n, unsigned char* out, size_t capacity) {
  size_t i = 0, o = 0;
  while (i < n) {
    const unsigned c = in[i++];
    if (c < 32) {
      const size_t len = c + 1;
      if (len > n - i || len > capacity - o) return -1;
      std::memcpy(out + o, in + i, len);
      i += len;
      o += len;
      continue;
    }
    size_t len = c >> 5;
    if (len == 7) {
      if (i >= n) return -1;
      len += in[i++];
    }
    len += 2;
    if (i >= n) return -1;
    const size_t back = ((c & 31) << 8 | in[i++]) + 1;
    if (back > o || len > capacity - o) return -1;
    for (size_t k = 0; k < len; ++k, ++o) out[o] = out[o - back];  // may overlap itself
  }
  return static_cast<long>(o);
}

namespace {

// The filter's callback: decoding only (writing LZF is never asked of a read-only mount).
// h5py stores the chunk's decoded size in cd_values[2].
size_t LzfFilter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                 size_t* buf_size, void** buf) {
  if (!(flags & H5Z_FLAG_REVERSE)) return 0;
  size_t capacity = cd_nelmts >= 3 && cd_values[2] != 0 ? cd_values[2] : 4 * nbytes + 64;
  for (int attempt = 0; attempt < 8; ++attempt, capacity *= 2) {
    auto* out = static_cast<unsigned char*>(std::malloc(capacity));
    if (out == nullptr) return 0;
    const long got = LzfDecode(static_cast<const unsigned char*>(*buf), nbytes, out, capacity);
    if (got >= 0) {
      std::free(*buf);
      *buf = out;
      *buf_size = capacity;
      return static_cast<size_t>(got);
    }
    std::free(out);
    if (cd_nelmts >= 3 && cd_values[2] != 0) return 0;  // the size was known: malformed
  }
  return 0;
}

}  // namespace

void RegisterLzf() {
  static std::once_flag once;
  std::call_once(once, [] {
    static const H5Z_class2_t kClass = {H5Z_CLASS_T_VERS,
                                        static_cast<H5Z_filter_t>(kLzfFilter),
                                        0,  // no encoder
                                        1,  // decoder present
                                        "lzf",
                                        nullptr,
                                        nullptr,
                                        LzfFilter};
    if (H5Zregister(&kClass) < 0) H5Eclear2(H5E_DEFAULT);
  });
}

}  // namespace omicsfs::io::h5
