// Writes a packed BPCells fragments directory store with the project's test-only writer:
// N fragments over chr1..chr22 in 5000 cells, ATAC-like lengths.
// Usage: gen_bpcells_fragments OUT_DIR N
#include <cstdio>
#include <cstdlib>
#include <random>

#include "testutil/store_writer.h"

int main(int argc, char** argv) {
  using namespace omicsfs::testutil;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR N\n", argv[0]);
    return 1;
  }
  const uint64_t n = std::strtoull(argv[2], nullptr, 10);
  std::mt19937_64 rng(9);
  FragmentsSpec f;
  for (int c = 1; c <= 22; ++c) f.chr_names.push_back("chr" + std::to_string(c));
  for (int i = 0; i < 5000; ++i) {
    std::string bc;
    for (int k = 0; k < 16; ++k) bc.push_back("ACGT"[rng() % 4]);
    f.cell_names.push_back(bc + "-1");
  }
  f.by_chr.resize(22);
  const uint64_t per = n / 22;
  for (size_t c = 0; c < 22; ++c) {
    uint32_t pos = 10000;
    for (uint64_t i = 0; i < per; ++i) {
      pos += static_cast<uint32_t>(rng() % 200);
      uint32_t len = 20 + static_cast<uint32_t>(rng() % 5 == 0 ? 150 + rng() % 400 : rng() % 150);
      f.by_chr[c].push_back({pos, pos + len, static_cast<uint32_t>(rng() % 5000)});
    }
  }
  auto st = WriteDirStore(MakeFragmentsStore(f), argv[1]);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s: %llu fragments\n", argv[1], static_cast<unsigned long long>(per * 22));
  return 0;
}
