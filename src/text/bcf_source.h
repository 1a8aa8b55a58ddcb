// BCF view of a VCF Zarr store: the uncompressed bytes `bcftools view --no-version -Ou` writes
// from the store's VCF view (text/vcf_source.h), chunk for chunk (chunk 0: magic and header, chunk
// k ≥ 1: the records of the VCF view's chunk k), served BGZF-compressed as STEM.bcf. The header
// is the VCF view's, as htslib formats it; each record's columns CHROM..INFO are the VCF view's
// text of that record (a few hundred bytes) encoded as vcf_parse would; its FORMAT part, nearly
// all of a record, is encoded from the decoded Zarr chunks directly (genotypes and integers
// without text; floats and strings through the entry's text, which fixes their values as
// bcftools reads them). A record bcftools would not write (a contig or key the header lacks) is
// an error, as `bcftools view -Ob` fails.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "text/bcf_encode.h"
#include "text/record_source.h"
#include "text/vcf_source.h"

namespace omicsfs::text {

class BcfSource : public RecordSource {
 public:
  // `vcf`: the full VCF view of the store, whose chunks these are.
  BcfSource(std::shared_ptr<const VcfSource> vcf, std::string name);

  uint64_t ChunkCount() const override { return vcf_->ChunkCount(); }
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override;
  // Spans as `bcftools index` reads the records: [POS − 1, POS − 1 + rlen) of each record.
  bool HasRecordSpans() const override { return true; }
  Status RecordSpans(uint64_t k, ChunkSpans* out) const override;
  // Sized by the VCF view's pass: chunk k measured from the Zarr chunks that pass just decoded.
  bool SpansFromPartner(const RecordSource& partner, uint64_t k, const ChunkSpans& from,
                        ChunkSpans* out) const override;

  // The parsed header (its text and dictionaries), made once.
  Result<const bcf::Header*> Header() const;

 private:
  // Chunk k into *out, each record's span into *spans (optional). With `measured`, the values
  // of genotype and integer FORMAT fields are not written but their length added to *measured.
  Status Render(uint64_t k, std::string* out, ChunkSpans* spans, uint64_t* measured) const;

  std::shared_ptr<const VcfSource> vcf_;
  std::string name_;
  mutable std::mutex mu_;
  mutable std::optional<Result<bcf::Header>> header_;
};

}  // namespace omicsfs::text
