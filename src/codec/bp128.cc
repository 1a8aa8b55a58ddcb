#include "codec/bp128.h"

#include <array>
#include <cstring>
#include <string>
#include <utility>

namespace omicsfs::codec {
namespace {

template <int B>
void UnpackFixed(const uint32_t* in, uint32_t* out) {
  constexpr uint32_t kMask = B == 32 ? 0xFFFFFFFFu : ((uint32_t{1} << B) - 1);
  for (int lane = 0; lane < 4; ++lane) {
    const uint32_t* w = in + lane;
    uint64_t buf = 0;
    int have = 0;
    int word = 0;
    for (int slot = 0; slot < 32; ++slot) {
      if (have < B) {
        buf |= static_cast<uint64_t>(w[4 * word]) << have;
        have += 32;
        ++word;
      }
      out[slot * 4 + lane] = static_cast<uint32_t>(buf) & kMask;
      buf >>= B;
      have -= B;
    }
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
      uint32_t acc = start;
      for (int i = 0; i < kBp128BlockSize; ++i) {
        uint32_t z = out[i];
        acc += (z >> 1) ^ (0u - (z & 1u));
        out[i] = acc;
      }
      break;
    }
  }
  return OkStatus();
}

}  // namespace omicsfs::codec
