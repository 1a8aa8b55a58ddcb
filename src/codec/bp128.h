// BP-128 (Lemire & Boytsov, SIMD-interleaved layout as written by BPCells): one block of 128
// 32-bit values packed at b bits into 4·b words. Value i lives in lane i % 4 at slot i / 4; each
// lane's 32 slots are a little-endian bit stream over words 4·k + lane. Pure bytes → values.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/status.h"

namespace omicsfs::codec {

inline constexpr int kBp128BlockSize = 128;

enum class Bp128Variant {
  kPlain,  // values as packed
  kM1,     // packed value + 1
  kD1,     // prefix sums of packed deltas, from `start` (mod 2^32)
  kD1Z,    // like kD1, deltas zigzag-encoded
};

// Number of 32-bit words one block occupies at `bits` bits.
constexpr size_t Bp128Words(int bits) { return static_cast<size_t>(bits) * 4; }

// Unpacks one block. `in` holds exactly `in_words` words, which must equal Bp128Words(bits);
// bits must be 0..32. A 32-bit block is a raw copy of the 128 untransformed values (no +1, no
// delta, no zigzag), as BPCells writes it. Returns Corrupt on any inconsistency, never UB.
Status Bp128Unpack(const uint32_t* in, size_t in_words, int bits, Bp128Variant variant,
                   uint32_t start, uint32_t* out);

// The raw bit-unpacking step alone (no transform); `bits` in 0..32.
void Bp128UnpackRaw(const uint32_t* in, int bits, uint32_t* out);

}  // namespace omicsfs::codec
