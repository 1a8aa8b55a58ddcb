#include "codec/bp128.h"

#include <array>
#include <cstring>
#include <string>
#include <utility>

namespace omicsfs::codec {
namespace {

// Four 32-bit lanes (GCC vector extension: SSE2 on x86-64, NEON on arm64).
typedef uint32_t Lanes __attribute__((vector_size(16)));

// The 4 lanes are interleaved word by word and advance in step, so one vector shift serves all
// four: slot s of every lane is bits [s·B, s·B + B) of that lane's words.
template <int B>
void UnpackFixed(const uint32_t* in, uint32_t* out) {
  constexpr uint32_t kMask = B == 32 ? 0xFFFFFFFFu : ((uint32_t{1} << B) - 1);
  Lanes cur;
  std::memcpy(&cur, in, sizeof(cur));
  int word = 0, shift = 0;
#pragma GCC unroll 32
  for (int slot = 0; slot < 32; ++slot) {
    Lanes v = cur >> shift;  // shift < 32 always
    int next = shift + B;
    if (next > 32) {  // the value continues in the lanes' next word
      std::memcpy(&cur, in + 4 * ++word, sizeof(cur));
      v |= cur << (32 - shift);
      next -= 32;
    } else if (next == 32 && slot != 31) {
      std::memcpy(&cur, in + 4 * ++word, sizeof(cur));
      next = 0;
    }
    v &= kMask;
    std::memcpy(out + 4 * slot, &v, sizeof(v));
    shift = next;
  }
}

using UnpackFn = void (*)(const uint32_t*, uint32_t*);

template <int... Bs>
constexpr auto MakeTable(std::integer_sequence<int, Bs...>) {
  return std::array<UnpackFn, sizeof...(Bs)>{&UnpackFixed<Bs + 1>...};
}

}  // namespace

void Bp128UnpackRaw(const uint32_t* in, int bits, uint32_t* out) {
  static constexpr auto kTable = MakeTable(std::make_integer_sequence<int, 32>());
  if (bits == 0) {
    std::memset(out, 0, kBp128BlockSize * sizeof(uint32_t));
    return;
  }
  kTable[bits - 1](in, out);
}

Status Bp128Unpack(const uint32_t* in, size_t in_words, int bits, Bp128Variant variant,
                   uint32_t start, uint32_t* out) {
  if (bits < 0 || bits > 32) {
    return CorruptError("bp128: bit width " + std::to_string(bits) + " is outside 0..32");
  }
  if (in_words != Bp128Words(bits)) {
    return CorruptError("bp128: " + std::to_string(in_words) + " words for a " +
                        std::to_string(bits) + "-bit block (expected " +
                        std::to_string(Bp128Words(bits)) + ")");
  }
  if (bits == 32) {  // stored raw and untransformed
    std::memcpy(out, in, kBp128BlockSize * sizeof(uint32_t));
    return OkStatus();
  }
  Bp128UnpackRaw(in, bits, out);
  switch (variant) {
    case Bp128Variant::kPlain:
      break;
    case Bp128Variant::kM1:
      for (int i = 0; i < kBp128BlockSize; ++i) out[i] += 1;
      break;
    case Bp128Variant::kD1: {
      uint32_t acc = start;
      for (int i = 0; i < kBp128BlockSize; ++i) out[i] = acc += out[i];
      break;
    }
    case Bp128Variant::kD1Z: {
      // The zigzag decode first (vectorised), then the running sum: one chain of adds.
      for (int i = 0; i < kBp128BlockSize; ++i) out[i] = (out[i] >> 1) ^ (0u - (out[i] & 1u));
      uint32_t acc = start;
      for (int i = 0; i < kBp128BlockSize; ++i) out[i] = acc += out[i];
      break;
    }
  }
  return OkStatus();
}

}  // namespace omicsfs::codec
