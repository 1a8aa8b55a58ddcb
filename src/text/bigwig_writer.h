// A bigWig file (UCSC's binary indexed format, version 4) of runs of equal value, written in
// memory: the coverage tracks' .bw (text/coverage_track.h). bedGraph-type data sections of up
// to 1 024 runs, zlib-compressed (libdeflate at level 1: the tracks are built while a reader
// waits), the chromosome B+ tree, the R-tree index of the sections, a total summary and zoom
// levels (per-bin summaries, each level 4x coarser, with R-trees of their own) so that a genome
// browser draws a whole chromosome from a few blocks. libBigWig (Debian libbigwig-dev) wrote the
// same layout but deflated at zlib's default level: 60 % of a group's track time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs::text {

struct BigWigRun {
  uint32_t begin = 0, end = 0;
  float value = 0;
};

struct BigWigChrom {
  std::string name;
  uint32_t size = 1;            // at least every run's end, at least 1
  std::vector<BigWigRun> runs;  // sorted, not overlapping
};

// The file's bytes; chromosomes in the header in the order given (their IDs).
Result<std::string> WriteBigWig(const std::vector<BigWigChrom>& chroms);

}  // namespace omicsfs::text
