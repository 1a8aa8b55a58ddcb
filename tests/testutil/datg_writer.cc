#include "testutil/datg_writer.h"

#include <lz4frame.h>
#include <zlib.h>

#include <cstring>
#include <fstream>

namespace omicsfs::testutil {
namespace {

void PutBE(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::string Frame(const std::string& in) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  std::string out(LZ4F_compressFrameBound(in.size(), &prefs), '\0');
  out.resize(LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs));
  return out;
}

Status WriteNames(const std::string& path, const std::vector<std::string>& names) {
  gzFile f = gzopen(path.c_str(), "wb6");
  if (!f) return IoError("gzopen " + path, errno);
  for (const auto& n : names) {
    gzwrite(f, n.data(), static_cast<unsigned>(n.size()));
    gzputc(f, '\n');
  }
  gzclose(f);
  return OkStatus();
}

}  // namespace

Status WriteDatg(const std::string& stem, uint64_t rows, uint64_t cols,
                 const std::vector<double>& values, const std::vector<std::string>& row_names,
                 const std::vector<std::string>& col_names, uint64_t rows_per_block) {
  const uint64_t rpb = rows_per_block
                           ? rows_per_block
                           : (cols < 100 ? (100 + cols - 1) / std::max<uint64_t>(cols, 1) : 1);
  std::string file, index;
  for (uint64_t r0 = 0; r0 < rows; r0 += rpb) {
    PutBE(&index, file.size(), 8);
    std::string block;
    for (uint64_t i = r0 * cols; i < std::min(rows, r0 + rpb) * cols; ++i) {
      uint64_t bits;
      std::memcpy(&bits, &values[i], 8);
      PutBE(&block, bits, 8);
    }
    file += Frame(block);
  }
  const uint64_t index_offset = file.size();
  file += Frame(index);
  const uint64_t meta_offset = file.size();
  for (const char* s : {"bench", "rows", "cols"}) {
    PutBE(&file, std::strlen(s), 2);
    file += s;
  }
  PutBE(&file, 1700000000, 8);
  PutBE(&file, rows, 4);
  PutBE(&file, cols, 4);
  PutBE(&file, index_offset, 8);
  PutBE(&file, meta_offset, 8);
  PutBE(&file, rpb, 4);
  file += std::string("\0\0\0\x01", 4);
  file += "UMCG";
  std::ofstream(stem + ".datg", std::ios::binary | std::ios::trunc) << file;
  RETURN_IF_ERROR(WriteNames(stem + ".rows.txt.gz", row_names));
  return WriteNames(stem + ".cols.txt.gz", col_names);
}

}  // namespace omicsfs::testutil
