// Zarr metadata (v2 .zarray + .zattrs, v3 zarr.json) and chunk decoding with the parsed metadata:
// input = metadata text, NUL, chunk bytes.
#include <optional>
#include <string>

#include "formats/zarr/array.h"
#include "formats/zarr/metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace omicsfs::formats::zarr;
  const std::string all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string meta = all.substr(0, nul);
  const std::string chunk = nul == std::string::npos ? "" : all.substr(nul + 1);
  for (int v : {2, 3}) {
    auto m = v == 2 ? ParseV2Metadata(meta, "") : ParseV3Metadata(meta);
    if (!m.ok() || m->ChunkElements() > (1u << 16)) continue;
    (void)DecodeChunk(*m, std::optional<std::string>(chunk));
    (void)DecodeChunk(*m, std::nullopt);
  }
  return 0;
}
