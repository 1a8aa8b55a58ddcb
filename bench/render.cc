// Renders every chunk of a view in this process, on one thread, pass after pass: a renderer's
// own cost without FUSE, the kernel or a reader process. Pass 1 decodes (VCF: into a decode cache
// large enough to keep the store, so later passes time the gathering and the formatting only;
// datg decodes its row blocks in every pass). Prints per pass the seconds, MB/s and an XXH3
// hash of all the text (~0.1 ns a byte, timed too); the thread's CPU time beside the wall time
// (steadier on a shared machine: time spent descheduled is left out) (two builds rendering the same
// store must print the same hash).
//   render vcf STORE.vcz [PASSES]          the full VCF view
//   render datg DIR/STEM [PASSES]          STEM.datg with STEM.rows.txt.gz, STEM.cols.txt.gz
//   render mtx DIR [PASSES]                matrix.mtx of a BPCells matrix directory
//   render dense DIR [PASSES]              its matrix.tsv (a col-major store is transposed into
//                                          $TMPDIR before pass 1, untimed)
//   render vcf|datg|mtx|dense STORE -K     chunk K's text on stdout instead
// Profile with `perf record -g ./render vcf STORE 5`.
#include <time.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cache/cache_pool.h"
#include "formats/bpcells/matrix.h"
#include "formats/datg/reader.h"
#include "formats/vcz/store.h"
#include "io/local/local_space.h"
#include "io/space_array_store.h"
#include "text/dense_source.h"
#include "text/mtx_source.h"
#include "text/tsv_source.h"
#include "text/vcf_source.h"

using namespace omicsfs;

namespace {

template <typename T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

}  // namespace

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: render vcf STORE.vcz | datg DIR/STEM | mtx|dense DIR [PASSES]\n");
    return 2;
  }
  const std::string kind = argv[1], path = argv[2];
  const int passes = argc > 3 ? std::atoi(argv[3]) : 3;
  cache::CachePool pool(uint64_t{8} << 30, 1.0);
  std::shared_ptr<const text::RecordSource> source;
  if (kind == "vcf") {
    auto store = Must(formats::vcz::Store::Open(path, {}, &pool), "open");
    source =
        std::make_shared<const text::VcfSource>(store, text::VcfSource::View::kFull, "cohort.vcf");
  } else if (kind == "datg") {
    auto open = [](const std::string& p) {
      return Must<std::shared_ptr<const io::LocalByteSource>>(io::LocalByteSource::OpenPath(p),
                                                              p.c_str());
    };
    auto datg = open(path + ".datg");
    auto rows = open(path + ".rows.txt.gz"), cols = open(path + ".cols.txt.gz");
    auto file = Must(formats::datg::DatgFile::Open(datg, *rows, *cols), "open");
    source = std::make_shared<const text::DatgTsvSource>(formats::datg::DatgMatrix::Whole(file),
                                                         "matrix.tsv");
  } else if (kind == "mtx" || kind == "dense") {
    std::shared_ptr<const io::ArrayStore> store =
        Must(io::SpaceArrayStore::Open(std::make_shared<io::LocalByteSpace>(path)), "open");
    auto matrix = Must(formats::bpcells::Matrix::Open(store), "open");
    if (kind == "mtx") {
      source = std::make_shared<const text::MtxSource>(matrix, "matrix.mtx");
    } else {
      const char* tmp = std::getenv("TMPDIR");
      source = std::make_shared<const text::DenseTsvSource>(
          matrix, "matrix.tsv", std::vector<std::string>{tmp != nullptr ? tmp : "/tmp"});
      Status st = source->Prepare();
      if (!st.ok()) {
        std::fprintf(stderr, "prepare: %s\n", st.ToString().c_str());
        return 1;
      }
    }
  } else {
    std::fprintf(stderr, "unknown kind %s\n", kind.c_str());
    return 2;
  }
  const uint64_t n = source->ChunkCount();
  std::string out;
  if (passes < 0) {
    Status st = source->RenderChunk(static_cast<uint64_t>(-passes), &out);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }
  XXH3_state_t* state = XXH3_createState();
  for (int pass = 1; pass <= passes; ++pass) {
    uint64_t bytes = 0;
    XXH3_64bits_reset(state);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = ThreadCpuSeconds();
    for (uint64_t k = 0; k < n; ++k) {
      out.clear();
      Status st = source->RenderChunk(k, &out);
      if (!st.ok()) {
        std::fprintf(stderr, "chunk %llu: %s\n", static_cast<unsigned long long>(k),
                     st.ToString().c_str());
        return 1;
      }
      bytes += out.size();
      XXH3_64bits_update(state, out.data(), out.size());
    }
    const double cpu = ThreadCpuSeconds() - c0;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("pass %d: %llu chunks %.1f MB %.3f s %.0f MB/s cpu %.3f s %.0f MB/s hash %016llx\n",
                pass, static_cast<unsigned long long>(n), bytes / 1e6, s, bytes / 1e6 / s, cpu,
                bytes / 1e6 / cpu, static_cast<unsigned long long>(XXH3_64bits_digest(state)));
    std::fflush(stdout);
  }
  XXH3_freeState(state);
  return 0;
}
