// BCF 2.2 encoding as htslib 1.16 writes it (`bcftools view -Ob` of a VCF): typed values (the
// smallest integer type holding a vector's values, the missing and vector-end sentinels of each
// width), the header text htslib formats from a parsed VCF header (a PASS filter first, IDX= on
// every dictionary line), its dictionaries, and one VCF record's text columns CHROM..INFO parsed
// as vcf_parse does. Rules reimplemented from htslib's vcf.c (bcf_enc_*, bcf_hdr_parse_line,
// bcf_hdr_register_hrec, vcf_parse, vcf_parse_info, vcf_parse_format); no formatting of text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/status.h"

namespace omicsfs::text::bcf {

// Value types of a typed value's descriptor byte.
enum Type : uint8_t { kNull = 0, kInt8 = 1, kInt16 = 2, kInt32 = 3, kFloat = 5, kChar = 7 };

inline constexpr int32_t kInt32Missing = INT32_MIN, kInt32VectorEnd = INT32_MIN + 1;
inline constexpr uint32_t kFloatMissing = 0x7F800001u, kFloatVectorEnd = 0x7F800002u;
// The smallest value of each width that is not a sentinel (BCF_MIN_BT_INT*).
inline constexpr int32_t kMinInt8 = -120, kMinInt16 = -32760, kMinInt32 = INT32_MIN + 8;

// A typed value's descriptor: `size` elements of `type` (sizes ≥ 15 follow as a typed integer).
void PutSize(std::string* out, uint32_t size, Type type);
// One integer as bcf_enc_int1 writes it (the sentinels as int8's).
void PutInt1(std::string* out, int32_t x);
// n integers as bcf_enc_vint writes them: the smallest width holding every value that is not a
// sentinel; the descriptor's size is `wsize` (per-sample width of FORMAT values), n when ≤ 0.
void PutInts(std::string* out, const int32_t* a, size_t n, int64_t wsize = -1);
// The width PutInts chooses for these values (kInt8, kInt16 or kInt32).
Type IntWidth(const int32_t* a, size_t n);
// The n values of a chosen width, without descriptor.
void PutIntsAs(std::string* out, const int32_t* a, size_t n, Type width);
void PutFloats(std::string* out, const float* a, size_t n);
void PutChars(std::string* out, std::string_view s);

// htslib's text to number conversions of a VCF value: strtod's double rounded to float (what
// hts_str2dbl and atof give for the decimals a VCF holds); `used` is how many chars were read
// (0: none, a failed conversion).
float ParseFloat(std::string_view s, size_t* used);
// hts_str2int on 64 bits: optional sign, digits; `used` 0 when there are no digits.
int64_t ParseInt(std::string_view s, size_t* used, bool* overflow);

// The dictionaries of a header, as htslib builds them.
struct HeaderDict {
  // Per ID of the shared string dictionary (FILTER, INFO, FORMAT): its number and the value type
  // of its INFO and FORMAT definitions (BCF_HT_*: 0 flag, 1 int, 2 real, 3 string; -1 undefined).
  struct Id {
    int32_t idx = 0;
    int info_type = -1, format_type = -1;
    bool filter = false;
  };
  std::unordered_map<std::string, Id> ids;
  std::unordered_map<std::string, int32_t> contigs;  // name → rid
  std::vector<std::string> contig_names;             // by rid
  std::vector<int64_t> contig_lengths;               // by rid (0: no length)
  uint32_t samples = 0;
};
inline constexpr int kHtFlag = 0, kHtInt = 1, kHtReal = 2, kHtStr = 3;

// A VCF header (its text, "##" lines then "#CHROM") as htslib parses it: the header text
// bcf_hdr_format writes into a BCF (no trailing NUL) and the dictionaries.
struct Header {
  std::string text;
  HeaderDict dict;
};
Result<Header> ParseVcfHeader(std::string_view vcf_header);

// The bytes before the records: "BCF\2\2", the text's length with its NUL, the text, the NUL.
std::string FileHeader(const Header& h);

// One record being encoded: the 24 bytes of fixed fields and the shared part (ID, alleles,
// FILTER, INFO); the FORMAT part (indiv) is appended by the caller.
struct Record {
  int32_t rid = 0;
  int64_t pos = 0;   // 0-based
  int64_t rlen = 0;  // REF length, or INFO/END − POS when END is past POS
  uint32_t qual_bits = kFloatMissing;
  uint32_t n_info = 0, n_allele = 0;
  std::string shared;
};

// Columns CHROM..INFO of one VCF line (tab-separated, no FORMAT) as vcf_parse reads them into
// `r`. An error where bcftools would not write the record (a contig, filter or INFO key the
// header lacks: htslib flags it and bcf_write refuses), naming it.
Status ParseSiteColumns(std::string_view line, const HeaderDict& dict, Record* r);

// The record's bytes: lengths, fixed fields, shared, `indiv` (n_fmt FORMAT fields of n_sample).
void PutRecord(std::string* out, const Record& r, std::string_view indiv, uint32_t n_fmt,
               uint32_t n_sample);

}  // namespace omicsfs::text::bcf
