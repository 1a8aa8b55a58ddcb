// A whole VCF Zarr store opened and rendered (STEM.vcf and sites.vcf) from an in-memory blob
// store. Input: records of [u8 key length][key][u16 LE value length][value] (tests/fuzz/run.sh
// serialises corpus stores this way for the seeds).
#include <map>
#include <memory>
#include <string>

#include "formats/vcz/store.h"
#include "io/memory_blob_store.h"
#include "text/vcf_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace omicsfs;
  std::map<std::string, std::string> blobs;
  size_t pos = 0;
  while (pos < size) {
    const size_t klen = data[pos++];
    if (size - pos < klen + 2) break;
    std::string key(reinterpret_cast<const char*>(data + pos), klen);
    pos += klen;
    const size_t vlen = data[pos] | (size_t{data[pos + 1]} << 8);
    pos += 2;
    if (size - pos < vlen) break;
    blobs[key] = std::string(reinterpret_cast<const char*>(data + pos), vlen);
    pos += vlen;
  }
  auto store = formats::vcz::Store::Open(std::make_shared<io::MemoryBlobStore>(std::move(blobs)));
  if (!store.ok()) return 0;
  for (auto view : {text::VcfSource::View::kFull, text::VcfSource::View::kSites}) {
    text::VcfSource source(*store, view, "fuzz.vcf");
    std::string out;
    const uint64_t chunks = source.ChunkCount();
    for (uint64_t k = 0; k < chunks && k < 64 && out.size() < (8u << 20); ++k) {
      if (!source.RenderChunk(k, &out).ok()) break;
    }
  }
  return 0;
}
