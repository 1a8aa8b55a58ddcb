// bcftools' filtering expressions (-i / -e) over VCF Zarr records: a parser into a tree and an
// evaluator over decoded variant blocks with bcftools 1.16's semantics (filter.c): comparisons of
// QUAL, FILTER, TYPE, CHROM, POS, ID, REF, ALT, INFO and FORMAT fields with numbers and strings,
// any element of an array matching (or `[i]`), missing values (`"."`, and a missing operand of
// `=`/`!=` as bcftools reads it), arithmetic, `&&` `||` (site), `&` `|` (within one sample),
// GT="het|hom|alt|ref|mis|hap", the computed N_ALT, N_SAMPLES, N_MISSING, F_MISSING, AC, AN, AF,
// MAC, MAF (the INFO tag where the header has it), and strlen(), abs(). What bcftools accepts and
// this does not (regular expressions, other functions, FORMAT subscripts) is refused by name.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "formats/vcz/filter.h"
#include "util/status.h"

namespace omicsfs::formats::vcz {

// `text` as bcftools -i (exclude: -e) reads it, against the fields of `s`. Errors name the part.
Result<std::unique_ptr<RecordTest>> ParseExpression(std::string_view text, bool exclude,
                                                    const Store& s);

}  // namespace omicsfs::formats::vcz
