// BPCells version strings: "[packed|unpacked]-[uint|float|double]-matrix-v[1|2]" and
// "[packed|unpacked]-fragments-v[1|2]".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/matrix.h"
#include "io/array_store.h"
#include "io/byte_source.h"
#include "util/status.h"

namespace omicsfs::formats::bpcells {

enum class StoreKind { kMatrix, kFragments };
using formats::ValueType;  // the matrix contract's

struct StoreVersion {
  StoreKind kind = StoreKind::kMatrix;
  bool packed = false;
  ValueType value_type = ValueType::kUInt32;  // matrices only
  int format = 2;                             // 1 or 2
};

std::optional<StoreVersion> ParseVersion(std::string_view version);

// True for strings shaped like a BPCells version ("packed-…-vN", "unpacked-…-vN"), including
// versions this build does not support: such a store is shown with ERROR.txt, not passed through.
bool LooksLikeVersion(std::string_view version);

// One wording for every array a reader needs, whichever it is: "WHERE: array 'NAME' is missing",
// "WHERE: array 'NAME' is float32[7], expected uint32[9]". `length` UINT64_MAX: any length.
// Returns the array's length.
Result<uint64_t> CheckArray(const io::ArrayStore& s, const std::string& name, io::ElemType type,
                            uint64_t length = UINT64_MAX);

// Every array name a BPCells directory store may hold, matrices and fragments, "version" first:
// how a store is read where there is no listing (plain HTTP).
const std::vector<std::string>& ArrayNames();

// The version of a directory store (its `version` object's first line); NotFound without one.
Result<std::string> ReadVersion(const io::ByteSpace& space);

}  // namespace omicsfs::formats::bpcells
