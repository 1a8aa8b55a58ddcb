// The datg reader over an arbitrary .datg file (trailer, metadata, index, LZ4 frames or LZ4Block
// streams, blocks), with valid name companions for a 3 x 4 matrix, all held in memory.
#include <zlib.h>

#include <memory>
#include <string>

#include "formats/datg/reader.h"
#include "io/memory_space.h"

namespace {

std::shared_ptr<const omicsfs::io::ByteSource> Companion(const std::string& name, int lines) {
  std::string text;
  for (int i = 0; i < lines; ++i) text += "n" + std::to_string(i) + "\n";
  // A gzip member: deflateInit2 with 16 + 15 window bits.
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
  std::string gz(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(text.data());
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(gz.data());
  z.avail_out = static_cast<uInt>(gz.size());
  deflate(&z, Z_FINISH);
  gz.resize(z.total_out);
  deflateEnd(&z);
  return std::make_shared<const omicsfs::io::MemoryByteSource>(name, std::move(gz));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto rows = Companion("x.rows.txt.gz", 3), cols = Companion("x.cols.txt.gz", 4);
  auto datg = std::make_shared<const omicsfs::io::MemoryByteSource>(
      "x.datg", std::string(reinterpret_cast<const char*>(data), size));
  auto f = omicsfs::formats::datg::DatgFile::Open(datg, *rows, *cols);
  if (f.ok()) {
    for (uint64_t b = 0; b < (*f)->blocks(); ++b) (void)(*f)->ReadBlock(b);
  }
  return 0;
}
