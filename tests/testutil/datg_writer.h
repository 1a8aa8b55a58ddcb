// Test-only writer of the datg format (LZ4 frames, flag 1), for tests and bench/.
#pragma once

#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs::testutil {

// `values` is row-major rows × cols. rows_per_block 0 = the writer's default
// (ceil(100/cols) when cols < 100, else 1).
Status WriteDatg(const std::string& stem, uint64_t rows, uint64_t cols,
                 const std::vector<double>& values, const std::vector<std::string>& row_names,
                 const std::vector<std::string>& col_names, uint64_t rows_per_block = 0);

}  // namespace omicsfs::testutil
