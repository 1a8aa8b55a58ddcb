// Small helpers that writers and parsers share: integers appended to a byte string least
// significant byte first (the order of every binary format written here: BGEN, tabix/CSI, the
// index files), and ASCII lower case (HTTP header names, S3 settings).
#pragma once

#include <cstdint>
#include <string>

namespace omicsfs {

// The low `bytes` bytes of `v`, least significant first.
inline void PutLittleEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutU16(std::string* out, uint64_t v) { PutLittleEndian(out, v, 2); }
inline void PutU32(std::string* out, uint64_t v) { PutLittleEndian(out, v, 4); }
inline void PutU64(std::string* out, uint64_t v) { PutLittleEndian(out, v, 8); }

inline std::string AsciiLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace omicsfs
