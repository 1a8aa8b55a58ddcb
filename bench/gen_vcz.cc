// Writes a realistic VCF Zarr store (Zarr v2, blosc zstd, as vcf2zarr lays it out) with the
// project's test-only Zarr writer: GT + DP + GQ + AD per call, INFO AC/AN/AF/DP, a few
// multi-allelic sites and missing calls.
// Usage: gen_vcz OUT.vcz VARIANTS SAMPLES [VARIANT_CHUNK] [SAMPLE_CHUNK] [BLOSC_BLOCKSIZE]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "testutil/zarr_writer.h"

using omicsfs::testutil::WriteZarrArray;
using omicsfs::testutil::WriteZarrGroup;
using omicsfs::testutil::ZarrArraySpec;

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s OUT.vcz VARIANTS SAMPLES [VARIANT_CHUNK] [SAMPLE_CHUNK] "
                 "[BLOSC_BLOCKSIZE]\n",
                 argv[0]);
    return 1;
  }
  const std::string out = argv[1];
  const uint64_t nv = std::strtoull(argv[2], nullptr, 10), ns = std::strtoull(argv[3], nullptr, 10);
  const uint64_t vc = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1000;
  const uint64_t sc = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 10000;
  // c-blosc's block size (0: its own choice); small blocks make many blocks per chunk, as large
  // chunks have them (tests of reads that decode only their blocks).
  const size_t blocksize = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 0;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  constexpr int kAlleles = 3;  // REF + up to 2 ALT

  std::vector<int16_t> contig(nv, 0);
  std::vector<int32_t> pos(nv);
  std::vector<std::string> alleles(nv * kAlleles), ids(nv, ".");
  std::vector<float> qual(nv);
  std::vector<uint8_t> filter(nv, 1);
  std::vector<int8_t> gt(nv * ns * 2);
  std::vector<uint8_t> phased(nv * ns, 0);
  std::vector<int16_t> dp(nv * ns), gq(nv * ns), ad(nv * ns * kAlleles);
  std::vector<int32_t> ac(nv * 2), an(nv), info_dp(nv);
  std::vector<float> af(nv * 2);
  const char* bases = "ACGT";
  uint32_t p = 10000;
  for (uint64_t v = 0; v < nv; ++v) {
    p += 1 + static_cast<uint32_t>(rng() % 300);
    pos[v] = static_cast<int32_t>(p);
    const bool multi = rng() % 50 == 0;
    const int nalt = multi ? 2 : 1;
    alleles[v * kAlleles] = std::string(1, bases[rng() % 4]);
    alleles[v * kAlleles + 1] = std::string(1, bases[rng() % 4]) + (rng() % 10 == 0 ? "T" : "");
    alleles[v * kAlleles + 2] = multi ? std::string(1, bases[rng() % 4]) + "GA" : "";
    if (rng() % 3 == 0) ids[v] = "rs" + std::to_string(1000000 + v);
    qual[v] = static_cast<float>(static_cast<int>(u(rng) * 100000) / 10.0);
    const double freq = u(rng) * 0.5;
    int32_t counts[3] = {0, 0, 0}, called = 0, depth = 0;
    for (uint64_t s = 0; s < ns; ++s) {
      const uint64_t c = v * ns + s;
      const bool missing = rng() % 100 == 0;
      for (int h = 0; h < 2; ++h) {
        int8_t a = missing
                       ? -1
                       : (u(rng) < freq ? static_cast<int8_t>(1 + (nalt == 2 ? rng() % 2 : 0)) : 0);
        gt[c * 2 + h] = a;
        if (a >= 0) {
          ++counts[a];
          ++called;
        }
      }
      phased[c] = rng() % 2;
      dp[c] = missing ? -1 : static_cast<int16_t>(5 + rng() % 60);
      gq[c] = missing ? -1 : static_cast<int16_t>(rng() % 99);
      for (int a = 0; a < kAlleles; ++a) {
        ad[c * kAlleles + a] = a > nalt ? -2 : missing ? -1 : static_cast<int16_t>(rng() % 40);
      }
      depth += missing ? 0 : dp[c];
    }
    for (int a = 0; a < 2; ++a) {
      ac[v * 2 + a] = a < nalt ? counts[a + 1] : -2;
      uint32_t fill = 0x7F800002u;
      float fillf;
      std::memcpy(&fillf, &fill, 4);
      af[v * 2 + a] =
          a < nalt
              ? (called ? static_cast<float>(counts[a + 1]) / static_cast<float>(called) : 0.0f)
              : fillf;
    }
    an[v] = called;
    info_dp[v] = depth;
  }
  std::vector<std::string> samples(ns);
  // GCC 12 at -O3 warns that "S" + std::string&& (an insert at 0) may memcpy overlapping ranges of
  // 2^63 bytes: a false positive of its -Wrestrict through std::string (GCC bug 105651), silenced
  // here only.
#pragma GCC diagnostic push
#ifndef __clang__  // a GCC warning; clang (the fuzz build) has none of that name
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
  for (uint64_t s = 0; s < ns; ++s) samples[s] = "S" + std::to_string(s + 1);
#pragma GCC diagnostic pop

  auto spec = [&](std::string dtype, std::vector<uint64_t> shape, std::vector<uint64_t> chunks,
                  std::vector<std::string> dims, std::string desc = "") {
    ZarrArraySpec a;
    a.dtype = std::move(dtype);
    a.shape = std::move(shape);
    a.chunks = std::move(chunks);
    a.dimension_names = std::move(dims);
    a.blosc_cname = "zstd";
    a.blosc_blocksize = blocksize;
    a.fill_value = a.dtype == "|O" ? nlohmann::json("") : nlohmann::json(nullptr);
    if (!desc.empty()) a.attributes["description"] = desc;
    return a;
  };
  const uint64_t scc = std::min(sc, ns);
  nlohmann::json attrs = {
      {"vcf_zarr_version", "0.4"},
      {"source", "omicsfs-bench"},
      {"vcf_meta_information",
       nlohmann::json::array({nlohmann::json::array({"fileformat", "VCFv4.3"})})}};
  bool ok = WriteZarrGroup(out, attrs).ok();
  ok &= WriteZarrArray(out, "contig_id", spec("|O", {1}, {1}, {"contigs"}), "", {"chr1"}).ok();
  ok &= WriteZarrArray(out, "contig_length", spec("<i8", {1}, {1}, {"contigs"}),
                       Bytes(std::vector<int64_t>{248956422}))
            .ok();
  ok &= WriteZarrArray(out, "filter_id", spec("|O", {1}, {1}, {"filters"}), "", {"PASS"}).ok();
  ok &= WriteZarrArray(out, "filter_description", spec("|O", {1}, {1}, {"filters"}), "",
                       {"All filters passed"})
            .ok();
  ok &= WriteZarrArray(out, "sample_id", spec("|O", {ns}, {scc}, {"samples"}), "", samples).ok();
  ok &= WriteZarrArray(out, "variant_contig", spec("<i2", {nv}, {vc}, {"variants"}), Bytes(contig))
            .ok();
  ok &= WriteZarrArray(out, "variant_position", spec("<i4", {nv}, {vc}, {"variants"}), Bytes(pos))
            .ok();
  ok &= WriteZarrArray(out, "variant_allele",
                       spec("|O", {nv, kAlleles}, {vc, kAlleles}, {"variants", "alleles"}), "",
                       alleles)
            .ok();
  ok &= WriteZarrArray(out, "variant_id", spec("|O", {nv}, {vc}, {"variants"}), "", ids).ok();
  ok &= WriteZarrArray(out, "variant_quality", spec("<f4", {nv}, {vc}, {"variants"}), Bytes(qual))
            .ok();
  ok &= WriteZarrArray(out, "variant_filter",
                       spec("|b1", {nv, 1}, {vc, 1}, {"variants", "filters"}), Bytes(filter))
            .ok();
  ok &= WriteZarrArray(out, "variant_AC",
                       spec("<i4", {nv, 2}, {vc, 2}, {"variants", "alt_alleles"}, "Allele count"),
                       Bytes(ac))
            .ok();
  ok &= WriteZarrArray(out, "variant_AN",
                       spec("<i4", {nv}, {vc}, {"variants"}, "Total number of alleles"), Bytes(an))
            .ok();
  ok &=
      WriteZarrArray(out, "variant_AF",
                     spec("<f4", {nv, 2}, {vc, 2}, {"variants", "alt_alleles"}, "Allele frequency"),
                     Bytes(af))
          .ok();
  ok &= WriteZarrArray(out, "variant_DP", spec("<i4", {nv}, {vc}, {"variants"}, "Combined depth"),
                       Bytes(info_dp))
            .ok();
  ok &= WriteZarrArray(out, "call_genotype",
                       spec("|i1", {nv, ns, 2}, {vc, scc, 2}, {"variants", "samples", "ploidy"}),
                       Bytes(gt))
            .ok();
  ok &= WriteZarrArray(out, "call_genotype_phased",
                       spec("|b1", {nv, ns}, {vc, scc}, {"variants", "samples"}), Bytes(phased))
            .ok();
  ok &= WriteZarrArray(out, "call_DP",
                       spec("<i2", {nv, ns}, {vc, scc}, {"variants", "samples"}, "Read depth"),
                       Bytes(dp))
            .ok();
  ok &=
      WriteZarrArray(out, "call_GQ",
                     spec("<i2", {nv, ns}, {vc, scc}, {"variants", "samples"}, "Genotype quality"),
                     Bytes(gq))
          .ok();
  ok &= WriteZarrArray(out, "call_AD",
                       spec("<i2", {nv, ns, kAlleles}, {vc, scc, kAlleles},
                            {"variants", "samples", "alleles"}, "Allelic depths"),
                       Bytes(ad))
            .ok();
  if (!ok) {
    std::fprintf(stderr, "writing %s failed\n", out.c_str());
    return 1;
  }
  std::printf("wrote %s: %llu variants x %llu samples\n", out.c_str(),
              static_cast<unsigned long long>(nv), static_cast<unsigned long long>(ns));
  return 0;
}
