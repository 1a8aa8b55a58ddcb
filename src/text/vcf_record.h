// What the VCF view writes for one record, for other views of the same records (the BCF view,
// text/bcf_source.h) that must show exactly what STEM.vcf shows: its columns CHROM to INFO as
// text, which FORMAT fields it shows, and one entry of a field as text.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/vcz/store.h"
#include "text/raw_text.h"
#include "util/status.h"

namespace omicsfs::text::vcf {

// CHROM, POS, ID, REF, ALT, QUAL, FILTER and INFO of row `row` of `b` (variant `variant` of the
// store, for messages), tab-separated, without a trailing tab.
Status WriteSiteColumns(const formats::vcz::Store& s, const formats::vcz::VariantBlock& b,
                        uint64_t row, uint64_t variant, RawText* o);

// The FORMAT fields row `row` shows (the store has samples): GT (*gt), then the store's FORMAT
// fields by index (*shown, in order). Both empty: FORMAT is ".".
void ShownFields(const formats::vcz::VariantBlock& b, uint64_t row, bool* gt,
                 std::vector<size_t>* shown);

// Values [first, first + n) of `b` as the VCF view writes one entry: up to the first fill, '.'
// for missing, `sep` between (strings joined by ',').
void WriteEntry(const formats::zarr::DenseBlock& b, uint64_t first, uint64_t n, char sep,
                RawText* o);

}  // namespace omicsfs::text::vcf
