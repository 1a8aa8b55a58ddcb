// BGEN v1.2 views of a VCF Zarr store beside its PLINK fileset (plink_source.h): STEM.bgen,
// STEM.sample and STEM.bgen.bgi. The .bgen holds the .bed's records (biallelic only) and the
// .bed's reading of every call, as layout 2, unphased, 8-bit probabilities from hard calls; each
// genotype block is a zlib stream of *stored* deflate blocks, so a variant block's size is
// arithmetic: its identifying strings plus 10 + N + N·P bytes of probabilities and the zlib
// framing (N samples; P = 1 for a haploid store, else 2, for every sample of every record).
// Per-call ploidy is therefore not carried: as in the .bed, a haploid call of a diploid store is
// its homozygous diploid call (REGENIE's coding of male chrX) and a call with a third allele is
// missing. See docs/formats/vcf-zarr.md.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "text/plink_source.h"
#include "text/record_source.h"

namespace omicsfs::text {

// Why BGEN cannot hold a store the .bed accepts, or OK: a sample ID longer than 65 535 bytes
// (2-byte lengths), 2^32 samples or more. (An ID or CHROM over 65 535 bytes fails its chunk.)
Status BgenRefusal(const formats::vcz::Store& store);

// One variant block of the .bgen, for the index.
struct BgenVariant {
  std::string_view chromosome, rsid, allele1, allele2;
  int64_t position = 0;
  uint64_t size = 0;  // the whole block: identifying data + genotype block
};

class BgenSource : public RecordSource {
 public:
  static constexpr uint64_t kTargetChunkBytes = 1 << 20;
  BgenSource(std::shared_ptr<const PlinkPlan> plan, std::string name,
             uint64_t target_chunk_bytes = kTargetChunkBytes);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const override;
  std::string Describe() const override { return name_ + " of " + plan_->store().Describe(); }

  // The variant blocks of chunk k ≥ 1 in file order, from the identifying arrays alone.
  Status ForEachVariant(uint64_t k, const std::function<Status(const BgenVariant&)>& f) const;
  // The header and sample identifier block (chunk 0).
  Result<std::string> Header() const;

 private:
  std::pair<uint64_t, uint64_t> Range(uint64_t k) const;
  Result<uint64_t> VariantCount() const;  // M: the biallelic records, counted once
  Status AppendGenotypes(const uint8_t* bed_row, std::string* raw, std::string* out) const;

  std::shared_ptr<const PlinkPlan> plan_;
  std::string name_;
  uint64_t ploidy_ = 2;
  uint64_t raw_size_ = 0;  // D: the uncompressed probability data of every variant
  uint64_t rows_per_chunk_ = 1;
  mutable std::once_flag count_once_;
  mutable Result<uint64_t> count_ = uint64_t{0};
};

// STEM.sample (the Oxford sample file plink2 and QCTOOL read): "ID_1 ID_2 missing", "0 0 0", then
// "ID ID 0" per sample (FID = IID = sample ID, as in the .fam).
class BgenSampleSource : public RecordSource {
 public:
  static constexpr uint64_t kSamplesPerChunk = 16384;
  BgenSampleSource(std::shared_ptr<const formats::vcz::Store> store, std::string name);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_ + " of " + store_->Describe(); }

 private:
  std::shared_ptr<const formats::vcz::Store> store_;
  std::string name_;
};

// STEM.bgen.bgi: bgenix's SQLite index of the .bgen, one chunk; loaded from index_dir when
// persisted there for this store (same fingerprint), else built in one pass over the identifying
// arrays and saved.
class BgenIndexSource : public RecordSource {
 public:
  BgenIndexSource(std::shared_ptr<const BgenSource> bgen, GwasViewOptions options,
                  std::string bgen_name, std::string name);
  uint64_t ChunkCount() const override { return 1; }
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_ + " of " + bgen_->Describe(); }

 private:
  Result<std::string> Build() const;

  std::shared_ptr<const BgenSource> bgen_;
  GwasViewOptions options_;
  std::string bgen_name_, name_;
};

}  // namespace omicsfs::text
