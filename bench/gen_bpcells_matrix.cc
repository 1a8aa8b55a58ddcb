// Writes a large packed BPCells matrix directory store (col-major uint32, counts-like values)
// with the project's own test-only writer. Usage: gen_bpcells_matrix OUT_DIR ROWS COLS DENSITY
// [SEED]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "testutil/store_writer.h"

int main(int argc, char** argv) {
  using namespace omicsfs::testutil;
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s OUT_DIR ROWS COLS DENSITY [SEED]\n", argv[0]);
    return 1;
  }
  const uint32_t rows = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
  const uint32_t cols = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
  const double density = std::strtod(argv[4], nullptr);
  std::mt19937_64 rng(argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 1);
  MatrixSpec m;
  m.rows = rows;
  m.cols = cols;
  m.packed = true;
  m.format_version = 2;
  m.kind = ValueKind::kUInt32;
  std::geometric_distribution<uint32_t> gap(density);
  std::geometric_distribution<uint32_t> count(0.45);
  m.idxptr.push_back(0);
  for (uint32_t c = 0; c < cols; ++c) {
    for (uint64_t r = gap(rng); r < rows; r += 1 + gap(rng)) {
      m.inner.push_back(static_cast<uint32_t>(r));
      m.values.push_back(1 + count(rng) + (rng() % 500 == 0 ? rng() % 5000 : 0));
    }
    m.idxptr.push_back(m.inner.size());
  }
  for (uint32_t r = 0; r < rows; ++r) m.row_names.push_back("GENE" + std::to_string(r + 1));
  for (uint32_t c = 0; c < cols; ++c) {
    std::string bc;
    for (int i = 0; i < 16; ++i) bc.push_back("ACGT"[rng() % 4]);
    m.col_names.push_back(bc + "-1");
  }
  omicsfs::Status st = WriteDirStore(MakeMatrixStore(m), argv[1]);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s: %u x %u, nnz %zu\n", argv[1], rows, cols, m.inner.size());
  return 0;
}
