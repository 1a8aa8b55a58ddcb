// Record filters of a VCF Zarr store: bcftools view's -v/-V (types), -m/-M (alleles), -f (FILTER
// names), -q/-Q (allele frequency) and -i/-e (expressions, formats/vcz/expr.h), applied to
// decoded variant blocks. A filter names the arrays it reads; MatchingRows passes over the
// store (or a slice of it) chunk by chunk, in parallel, reading only those. Never formats text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/vcz/store.h"
#include "util/status.h"

namespace omicsfs::formats::vcz {

// One condition on records.
class RecordTest {
 public:
  virtual ~RecordTest() = default;
  // The Store::Part bits of the arrays it reads (the alleles are always read).
  virtual unsigned Parts(const Store& s) const = 0;
  // Parts it needs besides, having seen a block read with Parts() (GT for the rows without
  // INFO/AC and AN): the block is read again with them.
  virtual unsigned MoreParts(const Store& s, const VariantBlock& b) const { return 0; }
  // keep[row] = 0 for the block's rows that fail it.
  virtual Status Apply(const Store& s, const VariantBlock& b, std::vector<uint8_t>* keep) const = 0;
  // Its identity: the same for any spelling of the same condition.
  virtual std::string Canonical() const = 0;
};

// types=snps,indels,mnps,other (and bcftools' ref, bnd): -v, or -V with `exclude`.
Result<std::unique_ptr<RecordTest>> ParseTypes(std::string_view value, bool exclude);
// alleles=N, N-M, N-: -m N -M M (alleles counted REF + ALT).
Result<std::unique_ptr<RecordTest>> ParseAlleles(std::string_view value);
// filter=PASS,q10,.: -f (a record with any of them; `.` a record without FILTER).
Result<std::unique_ptr<RecordTest>> ParseFilterNames(std::string_view value, const Store& s);
// min-af=X[:nref|alt1|minor|major|nonmajor] (-q), max-af= (-Q): from INFO/AC and AN, else GT.
Result<std::unique_ptr<RecordTest>> ParseAlleleFrequency(std::string_view value, bool min);

// bcftools' variant type bits of a record (htslib bcf_get_variant_types): VCF_SNP 1, MNP 2,
// INDEL 4, OTHER 8, BND 16, OVERLAP 32; 0 for a reference-only record.
int VariantTypes(const std::vector<const std::string*>& alleles);
// bcftools' bcf_calc_ac(INFO|FMT) of a row: per allele counts, from INFO/AC and AN where both are
// given (or the recount of a samples slice), else from the GT calls; zeros without either.
std::vector<int64_t> AlleleCounts(const Store& s, const VariantBlock& b, uint64_t row,
                                  uint64_t n_allele);
// The counts from INFO/AC and AN alone (bcftools' first choice); nullopt where they do not serve.
std::optional<std::vector<int64_t>> CountsFromInfo(const Store& s, const VariantBlock& b,
                                                   uint64_t row, uint64_t n_allele);
// The alleles of a row: REF, then the ALTs shown.
std::vector<const std::string*> AllelesOf(const VariantBlock& b, uint64_t row);

// The rows of `s` (the root, or a slice of it) that pass every test, as runs of the root's rows
// in `s`'s order. Variants-chunks are read in parallel; a pass over many chunks logs progress
// naming `what`.
Result<std::vector<std::pair<uint64_t, uint64_t>>> MatchingRows(
    const Store& s, const std::vector<const RecordTest*>& tests, const std::string& what);

}  // namespace omicsfs::formats::vcz
