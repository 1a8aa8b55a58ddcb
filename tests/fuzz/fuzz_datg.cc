// The datg reader over an arbitrary .datg file (trailer, metadata, index, LZ4 frames or LZ4Block
// streams, blocks), with valid name companions for a 3 x 4 matrix.
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "formats/datg/reader.h"

namespace {

std::string Companion(const std::string& path, int lines) {
  gzFile f = gzopen(path.c_str(), "wb");
  for (int i = 0; i < lines; ++i) gzputs(f, ("n" + std::to_string(i) + "\n").c_str());
  gzclose(f);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/omicsfs-fuzz-datg-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  static const std::string rows = Companion(dir + "/x.rows.txt.gz", 3), cols = Companion(dir + "/x.cols.txt.gz", 4);
  const std::string path = dir + "/x.datg";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  auto f = omicsfs::formats::datg::DatgFile::Open(path, rows, cols);
  if (f.ok()) {
    for (uint64_t b = 0; b < (*f)->blocks(); ++b) (void)(*f)->ReadBlock(b);
  }
  return 0;
}
