// Writes a datg matrix of realistic z-scores (normal, some heavy tails, a few NaN) with the
// project's test-only datg writer. Usage: gen_datg OUT_STEM ROWS COLS
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "testutil/datg_writer.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s OUT_STEM ROWS COLS\n", argv[0]);
    return 1;
  }
  const uint64_t rows = std::strtoull(argv[2], nullptr, 10),
                 cols = std::strtoull(argv[3], nullptr, 10);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> v(rows * cols);
  for (auto& x : v) {
    x = z(rng);
    if (rng() % 1000 == 0) x *= 40;  // strong eQTL effects
    if (rng() % 20000 == 0) x = std::nan("");
  }
  std::vector<std::string> rn(rows), cn(cols);
  for (uint64_t r = 0; r < rows; ++r) rn[r] = "ENSG" + std::to_string(100000000000ull + r);
  for (uint64_t c = 0; c < cols; ++c) cn[c] = "rs" + std::to_string(1000000 + c * 37);
  auto st = omicsfs::testutil::WriteDatg(argv[1], rows, cols, v, rn, cn);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s.datg: %llu x %llu\n", argv[1], static_cast<unsigned long long>(rows),
              static_cast<unsigned long long>(cols));
  return 0;
}
