// PLINK 1 binary fileset views of a VCF Zarr store: STEM.bed, STEM.bim and STEM.fam, byte-identical
// to what plink2 2.00a3.5 writes from the store's own VCF view with
//   plink2 --vcf STEM.vcf --make-bed --double-id --max-alleles 2 --vcf-half-call m
//   --allow-extra-chr
// Every rule below was checked against that plink2 on this machine (docs/formats/vcf-zarr.md).
// The .bed's size is arithmetic: 3 + n_biallelic × ceil(n_samples / 4); chunk 0 is the magic, chunk
// k ≥ 1 the biallelic records of one variant range, measured from the alleles alone.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/vcz/store.h"
#include "text/record_source.h"
#include "util/settled.h"

namespace omicsfs::text {

// plink2's chromosome code for a VCF CHROM (human defaults, --allow-extra-chr): a case-insensitive
// "chr" is dropped before 1–2 digit numbers and X/Y/XY/M/MT; 0–22 are numbers, 23 X, 24 Y, 25 XY,
// 26 MT, 27 PAR1, 28 PAR2; anything else is kept whole. nullopt: plink2 refuses it (29–99).
std::optional<std::string> PlinkChromosome(std::string_view chrom);

// The ALT column exactly as the VCF view writes it ("." when every ALT is missing).
std::string PlinkAltText(const formats::zarr::DenseBlock& alleles, uint64_t row);

// The ALT column test plink2 makes: REF + one ALT field (the records the .bed keeps).
bool PlinkBiallelic(const formats::zarr::DenseBlock& alleles, uint64_t row);
// A string column entry as the VCF view writes it ('.' when all missing, ',' between strings).
void PlinkAppendStrings(const std::vector<std::string>& v, uint64_t first, uint64_t n,
                        std::string* out);
// An integer element of a block of any integer dtype.
int64_t PlinkInt(const formats::zarr::DenseBlock& b, uint64_t i);

// The .bed rows (ceil(n_samples / 4) bytes each: plink2's reading of every call) of the biallelic
// records of `b` (which holds kAllele and kGenotype), appended to `out`. Errors: a call plink2
// refuses, in any record (multi-allelic ones included).
Status PlinkBedRows(const formats::vcz::Store& store, const formats::vcz::VariantBlock& b,
                    std::string* out);

// Why plink2 refuses the whole store before reading a record (no samples, a sample ID it
// rejects, no biallelic record), or OK. Reads the alleles until a biallelic record is found.
Status PlinkRefusal(const formats::vcz::Store& store);

// What the .bed and .bim share: the store, plink2's code per contig, and the checks plink2 makes
// on every record of the file (contig codes, positions, no split chromosome), made once.
class PlinkPlan {
 public:
  explicit PlinkPlan(std::shared_ptr<const formats::vcz::Store> store);
  const formats::vcz::Store& store() const { return *store_; }
  // The contig's plink2 code, or nullopt (refused); `c` is checked against the contig count.
  const std::optional<std::string>* Code(int64_t c) const;
  // OK, or why plink2 refuses this store; the first call scans contigs and positions.
  Status Checked() const;

 private:
  Status Check() const;

  std::shared_ptr<const formats::vcz::Store> store_;
  std::vector<std::optional<std::string>> codes_;
  std::vector<uint32_t> code_ids_;  // per contig: an id per distinct code (split detection)
  SettledStatus checked_;
};

// Rows per chunk: about `target_bytes` of output at `bytes_per_row`, in equal parts of one
// variants-chunk of the store (neighbouring chunks share its decoded Zarr chunks in the cache).
uint64_t PlinkRowsPerChunk(const formats::vcz::Store& store, uint64_t bytes_per_row,
                           uint64_t target_bytes);

class PlinkBedSource : public RecordSource {
 public:
  static constexpr uint64_t kTargetChunkBytes = 1 << 20;
  PlinkBedSource(std::shared_ptr<const PlinkPlan> plan, std::string name,
                 uint64_t target_chunk_bytes = kTargetChunkBytes);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  // n_biallelic(range) × bytes per variant, from the alleles alone.
  Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const override;
  std::string Describe() const override { return name_ + " of " + plan_->store().Describe(); }

 private:
  std::pair<uint64_t, uint64_t> Range(uint64_t k) const;

  std::shared_ptr<const PlinkPlan> plan_;
  std::string name_;
  uint64_t bytes_per_variant_ = 0;
  uint64_t rows_per_chunk_ = 1;
};

class PlinkBimSource : public RecordSource {
 public:
  static constexpr uint64_t kTargetChunkBytes = 512 << 10;
  PlinkBimSource(std::shared_ptr<const PlinkPlan> plan, std::string name,
                 uint64_t target_chunk_bytes = kTargetChunkBytes);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_ + " of " + plan_->store().Describe(); }

 private:
  std::shared_ptr<const PlinkPlan> plan_;
  std::string name_;
  uint64_t rows_per_chunk_ = 1;
};

// FID = IID = sample ID, then "0\t0\t0\t-9".
class PlinkFamSource : public RecordSource {
 public:
  static constexpr uint64_t kSamplesPerChunk = 16384;
  PlinkFamSource(std::shared_ptr<const formats::vcz::Store> store, std::string name);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_ + " of " + store_->Describe(); }

 private:
  std::shared_ptr<const formats::vcz::Store> store_;
  std::string name_;
};

class IndexStore;

// What the BGEN index (STEM.bgen.bgi) needs from discovery: where it is persisted and the store's
// mtime (its Metadata table's last_write_time).
struct GwasViewOptions {
  const IndexStore* index = nullptr;  // optional; must outlive the views
  std::string key;                    // the store's fingerprint; empty = not persisted
  int64_t mtime = 0;
};

}  // namespace omicsfs::text
