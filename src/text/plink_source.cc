#include "text/plink_source.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <type_traits>

#include "text/bgen_source.h"
#include "text/number_format.h"
#include "util/log.h"

namespace omicsfs::text {
namespace {

using formats::vcz::Store;
using formats::zarr::DenseBlock;
using formats::zarr::DType;

constexpr int64_t kIntMissing = -1, kIntFill = -2;
// .bed genotype codes (SNP-major; A1 = ALT, A2 = REF); padding bits are 00.
constexpr uint8_t kHomA1 = 0, kMissing = 1, kHet = 2, kHomA2 = 3, kInvalid = 4;
constexpr uint8_t kBedMagic[3] = {0x6c, 0x1b, 0x01};
// Positions plink2 accepts: 0 ≤ POS < 2^31 − 1 ("Invalid POS" otherwise, checked here).
constexpr int64_t kMaxPos = 2147483646;

using formats::zarr::IntAt;

bool StringMissing(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '.' || c == '\0'; });
}

// A string column entry as the VCF view writes it: '.' when all missing, else the strings without
// NULs, ',' before every non-empty one after the first.
void AppendStrings(const std::vector<std::string>& v, uint64_t first, uint64_t n,
                   std::string* out) {
  bool missing = true;
  for (uint64_t c = 0; c < n && missing; ++c) missing = StringMissing(v[first + c]);
  if (missing) {
    out->push_back('.');
    return;
  }
  for (uint64_t c = 0; c < n; ++c) {
    const std::string& s = v[first + c];
    if (c > 0 && !s.empty() && s[0] != '\0') out->push_back(',');
    for (char ch : s) {
      if (ch != '\0') out->push_back(ch);
    }
  }
}

// Alleles plink2 counts in a record: REF + the comma-separated fields of the ALT text.
int64_t AlleleCount(const DenseBlock& alleles, uint64_t row) {
  const std::string alt = PlinkAltText(alleles, row);
  return 2 + std::count(alt.begin(), alt.end(), ',');
}

// plink2's reading of one sample's GT text, which the VCF view writes from values up to the first
// fill (-1 as '.'): checked on plink2 2.00a3.5 with one-sample VCFs. The first allele decides
// first ('.' → missing, whatever follows; out of range → "invalid GT field", the whole run fails);
// a third allele makes the call missing (ploidy > 2) before the second is checked; a haploid call
// is homozygous; a half-call is missing (--vcf-half-call m).
template <typename T>
inline bool IsFill(T x) {
  if constexpr (std::is_signed_v<T>) return x == kIntFill;
  return false;  // unsigned calls have no sentinels (the VCF view writes them as numbers)
}

template <typename T>
inline uint8_t GtCode(const T* v, uint64_t ploidy, int64_t alleles) {
  static constexpr uint8_t kBySum[3] = {kHomA2, kHet, kHomA1};
  const int64_t a = v[0];
  if (IsFill(v[0])) return kInvalid;  // an empty GT field
  if (a == kIntMissing && std::is_signed_v<T>) return kMissing;
  if (a < 0 || a >= alleles) return kInvalid;  // a fill here is an empty GT: invalid too
  if (ploidy == 1 || IsFill(v[1])) return a == 0 ? kHomA2 : kHomA1;
  if (ploidy > 2 && !IsFill(v[2])) return kMissing;
  const int64_t b = v[1];
  if (b == kIntMissing && std::is_signed_v<T>) return kMissing;
  if (b < 0 || b >= alleles) return kInvalid;
  return alleles == 2 ? kBySum[a + b] : kHet;
}

template <typename T>
bool RowAllMissing(const T* v, uint64_t n) {
  if constexpr (std::is_unsigned_v<T>) return n == 0;  // the sentinels are negative
  for (uint64_t i = 0; i < n; ++i) {
    if (v[i] != kIntMissing && v[i] != kIntFill) return false;
  }
  return true;
}

// One record's genotypes: with `out`, packed into ceil(ns/4) bytes; without, only checked (the
// multi-allelic records plink2 drops but still parses). A record whose calls are all missing or
// fill has no GT in the VCF view: all missing, unchecked.
template <typename T>
Status EncodeRow(const T* v, uint64_t ns, uint64_t ploidy, int64_t alleles, uint8_t* out) {
  if (RowAllMissing(v, ns * ploidy)) {
    if (out != nullptr) {
      for (uint64_t s = 0; s < ns; ++s) out[s / 4] |= kMissing << (2 * (s % 4));
    }
    return OkStatus();
  }
  for (uint64_t s = 0; s < ns; ++s, v += ploidy) {
    const uint8_t code = GtCode(v, ploidy, alleles);
    if (code == kInvalid) {
      return CorruptError("sample " + std::to_string(s) +
                          ": a genotype plink2 refuses (\"invalid GT field\")");
    }
    if (out != nullptr) out[s / 4] |= code << (2 * (s % 4));
  }
  return OkStatus();
}

template <typename T>
Status EncodeBlock(const formats::vcz::VariantBlock& b, uint64_t ns, uint64_t bpv,
                   std::string* out) {
  const uint64_t ploidy = b.genotype->row_elems / ns;
  const T* gt = b.genotype->data<T>();
  for (uint64_t row = 0; row < b.count; ++row) {
    const int64_t alleles = AlleleCount(b.allele, row);
    uint8_t* dst = nullptr;
    if (alleles == 2) {
      out->append(bpv, '\0');
      dst = reinterpret_cast<uint8_t*>(out->data() + out->size() - bpv);
    }
    Status st = EncodeRow(gt + row * ns * ploidy, ns, ploidy, alleles, dst);
    if (!st.ok()) return std::move(st).WithContext("variant " + std::to_string(b.first + row));
  }
  return OkStatus();
}

}  // namespace

std::optional<std::string> PlinkChromosome(std::string_view chrom) {
  std::string_view s = chrom;
  auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); };
  if (s.size() > 3 && lower(s[0]) == 'c' && lower(s[1]) == 'h' && lower(s[2]) == 'r')
    s.remove_prefix(3);
  const bool stripped = s.size() != chrom.size();
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if ((s.size() == 1 && digit(s[0])) || (s.size() == 2 && digit(s[0]) && digit(s[1]))) {
    const int n = s.size() == 1 ? s[0] - '0' : (s[0] - '0') * 10 + (s[1] - '0');
    static const char* kNamed[] = {"X", "Y", "XY", "MT", "PAR1", "PAR2"};
    if (n <= 22) return std::to_string(n);
    if (n <= 28) return std::string(kNamed[n - 23]);
    return std::nullopt;  // "Invalid chromosome code ... disallowed for humans"
  }
  std::string up;
  for (char c : s) up.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c));
  if (up == "X" || up == "Y" || up == "XY") return up;
  if (up == "M" || up == "MT") return std::string("MT");
  if (!stripped && (up == "PAR1" || up == "PAR2")) return up;  // "chrPAR1" stays as it is
  return std::string(chrom);
}

std::string PlinkAltText(const DenseBlock& alleles, uint64_t row) {
  const uint64_t na = alleles.row_elems;
  std::string alt;
  if (na < 2) return ".";
  AppendStrings(alleles.strings, row * na + 1, na - 1, &alt);
  return alt;
}

Status PlinkRefusal(const Store& store) {
  if (store.samples().empty())
    return UnsupportedError("no samples (plink2: \"No samples in --vcf file\")");
  for (const std::string& id : store.samples()) {
    if (id == "0")
      return UnsupportedError("a sample ID is '0' (plink2: \"Sample ID cannot be '0'\")");
    if (id.empty() || id[0] == '#')
      return UnsupportedError("sample ID '" + id +
                              "' is empty or starts with '#' (plink2 refuses it)");
    // plink2 splits such IDs into FID and IID at the space; not mirrored here.
    if (id.find(' ') != std::string::npos)
      return UnsupportedError("sample ID '" + id + "' holds a space");
  }
  const uint64_t step = store.range_rows();
  for (uint64_t v0 = 0; v0 < store.num_variants(); v0 += step) {
    const uint64_t v1 = std::min(v0 + step, store.num_variants());
    ASSIGN_OR_RETURN(formats::vcz::VariantBlock b, store.ReadParts(v0, v1, Store::kAllele));
    for (uint64_t row = 0; row < b.count; ++row) {
      if (AlleleCount(b.allele, row) == 2) return OkStatus();
    }
  }
  return UnsupportedError("no biallelic record (plink2 --max-alleles 2: \"No variants loaded\")");
}

PlinkPlan::PlinkPlan(std::shared_ptr<const Store> store) : store_(std::move(store)) {
  std::map<std::string, uint32_t> ids;
  for (const std::string& c : store_->contigs()) {
    codes_.push_back(
        PlinkChromosome(StringMissing(c) ? std::string_view(".") : std::string_view(c)));
    code_ids_.push_back(ids.emplace(codes_.back().value_or(""), ids.size()).first->second);
  }
}

const std::optional<std::string>* PlinkPlan::Code(int64_t c) const {
  if (c < 0 || static_cast<uint64_t>(c) >= codes_.size()) return nullptr;
  return &codes_[c];
}

Status PlinkPlan::Checked() const {
  return checked_.Get([this] { return Check(); });
}

// plink2 parses every record, multi-allelic ones too, and refuses the whole file for an invalid
// contig code or POS, or a contig that comes back after another ("split chromosome"; checked on
// the codes: chr1 then 1 is one chromosome). Two small integer arrays: 4 MB per million records.
Status PlinkPlan::Check() const {
  const Store& s = *store_;
  const uint64_t step = s.range_rows();
  std::vector<bool> seen(codes_.size() + 1);
  int64_t prev = -1;
  for (uint64_t v0 = 0; v0 < s.num_variants(); v0 += step) {
    const uint64_t v1 = std::min(v0 + step, s.num_variants());
    ASSIGN_OR_RETURN(formats::vcz::VariantBlock b,
                     s.ReadParts(v0, v1, Store::kContig | Store::kPosition));
    for (uint64_t row = 0; row < b.count; ++row) {
      const std::string where = s.Describe() + ": variant " + std::to_string(v0 + row) + ": ";
      const int64_t c = IntAt(b.contig, row);
      const auto* code = Code(c);
      if (code == nullptr)
        return CorruptError(where + "contig index " + std::to_string(c) + " is out of range");
      if (!*code)
        return UnsupportedError(where + "plink2 refuses contig '" + s.contigs()[c] +
                                "' (invalid chromosome code)");
      const uint32_t id = code_ids_[c];
      if (static_cast<int64_t>(id) != prev) {
        if (seen[id])
          return UnsupportedError(where + "contig '" + s.contigs()[c] +
                                  "' comes back after another (plink2: split chromosome)");
        seen[id] = true;
        prev = id;
      }
      const int64_t pos = IntAt(b.position, row);
      if (pos < 0 || pos > kMaxPos)
        return UnsupportedError(where + "plink2 refuses POS " +
                                (pos == kIntMissing ? std::string(".") : std::to_string(pos)));
    }
  }
  return OkStatus();
}

uint64_t PlinkRowsPerChunk(const Store& store, uint64_t bytes_per_row, uint64_t target_bytes) {
  const uint64_t range = store.range_rows();
  const uint64_t want =
      std::clamp<uint64_t>(target_bytes / std::max<uint64_t>(bytes_per_row, 1), 1, range);
  const uint64_t parts = (range + want - 1) / want;
  return (range + parts - 1) / parts;
}

PlinkBedSource::PlinkBedSource(std::shared_ptr<const PlinkPlan> plan, std::string name,
                               uint64_t target_chunk_bytes)
    : plan_(std::move(plan)), name_(std::move(name)) {
  bytes_per_variant_ = (plan_->store().samples().size() + 3) / 4;
  rows_per_chunk_ = PlinkRowsPerChunk(plan_->store(), bytes_per_variant_, target_chunk_bytes);
}

uint64_t PlinkBedSource::ChunkCount() const {
  return 1 + (plan_->store().num_variants() + rows_per_chunk_ - 1) / rows_per_chunk_;
}

std::pair<uint64_t, uint64_t> PlinkBedSource::Range(uint64_t k) const {
  const uint64_t v0 = (k - 1) * rows_per_chunk_;
  return {v0, std::min(v0 + rows_per_chunk_, plan_->store().num_variants())};
}

Result<std::optional<uint64_t>> PlinkBedSource::MeasureChunk(uint64_t k) const {
  if (k == 0) return std::optional<uint64_t>(sizeof(kBedMagic));
  RETURN_IF_ERROR(plan_->Checked());
  const auto [v0, v1] = Range(k);
  ASSIGN_OR_RETURN(formats::vcz::VariantBlock b, plan_->store().ReadParts(v0, v1, Store::kAllele));
  uint64_t n = 0;
  for (uint64_t row = 0; row < b.count; ++row) n += AlleleCount(b.allele, row) == 2;
  return std::optional<uint64_t>(n * bytes_per_variant_);
}

Status PlinkBedSource::RenderChunk(uint64_t k, std::string* out) const {
  if (k == 0) {
    out->append(reinterpret_cast<const char*>(kBedMagic), sizeof(kBedMagic));
    return OkStatus();
  }
  RETURN_IF_ERROR(plan_->Checked());
  const auto [v0, v1] = Range(k);
  ASSIGN_OR_RETURN(formats::vcz::VariantBlock b,
                   plan_->store().ReadParts(v0, v1, Store::kAllele | Store::kGenotype));
  return PlinkBedRows(plan_->store(), b, out);
}

Status PlinkBedRows(const Store& s, const formats::vcz::VariantBlock& b, std::string* out) {
  const uint64_t ns = s.samples().size(), bytes_per_variant = (ns + 3) / 4;
  if (!b.genotype) {  // no call_genotype: no GT in the VCF view, every call missing
    std::string missing(bytes_per_variant, '\0');
    for (uint64_t i = 0; i < ns; ++i)
      missing[i / 4] = static_cast<char>(missing[i / 4] | (kMissing << (2 * (i % 4))));
    for (uint64_t row = 0; row < b.count; ++row) {
      if (AlleleCount(b.allele, row) == 2) out->append(missing);
    }
    return OkStatus();
  }
  switch (b.genotype->dtype) {
    case DType::kInt8:
      return EncodeBlock<int8_t>(b, ns, bytes_per_variant, out);
    case DType::kInt16:
      return EncodeBlock<int16_t>(b, ns, bytes_per_variant, out);
    case DType::kInt32:
      return EncodeBlock<int32_t>(b, ns, bytes_per_variant, out);
    case DType::kInt64:
      return EncodeBlock<int64_t>(b, ns, bytes_per_variant, out);
    case DType::kUInt8:
      return EncodeBlock<uint8_t>(b, ns, bytes_per_variant, out);
    case DType::kUInt16:
      return EncodeBlock<uint16_t>(b, ns, bytes_per_variant, out);
    case DType::kUInt32:
      return EncodeBlock<uint32_t>(b, ns, bytes_per_variant, out);
    default:
      return UnsupportedError(s.Describe() +
                              ": call_genotype: element type not supported by the .bed view");
  }
}

bool PlinkBiallelic(const DenseBlock& alleles, uint64_t row) {
  return AlleleCount(alleles, row) == 2;
}

void PlinkAppendStrings(const std::vector<std::string>& v, uint64_t first, uint64_t n,
                        std::string* out) {
  AppendStrings(v, first, n, out);
}

int64_t PlinkInt(const DenseBlock& b, uint64_t i) { return IntAt(b, i); }

PlinkBimSource::PlinkBimSource(std::shared_ptr<const PlinkPlan> plan, std::string name,
                               uint64_t target_chunk_bytes)
    : plan_(std::move(plan)), name_(std::move(name)) {
  rows_per_chunk_ = PlinkRowsPerChunk(plan_->store(), 32, target_chunk_bytes);  // ~32 bytes a line
}

uint64_t PlinkBimSource::ChunkCount() const {
  return (plan_->store().num_variants() + rows_per_chunk_ - 1) / rows_per_chunk_;
}

// CHROM (plink2's code) \t ID \t 0 \t POS \t A1 (ALT) \t A2 (REF), biallelic records only.
Status PlinkBimSource::RenderChunk(uint64_t k, std::string* out) const {
  RETURN_IF_ERROR(plan_->Checked());
  const Store& s = plan_->store();
  const uint64_t v0 = k * rows_per_chunk_, v1 = std::min(v0 + rows_per_chunk_, s.num_variants());
  const unsigned parts = Store::kContig | Store::kPosition | Store::kId | Store::kAllele;
  ASSIGN_OR_RETURN(formats::vcz::VariantBlock b, s.ReadParts(v0, v1, parts));
  const uint64_t na = b.allele.row_elems;
  for (uint64_t row = 0; row < b.count; ++row) {
    const std::string alt = PlinkAltText(b.allele, row);
    if (alt.find(',') != std::string::npos) continue;  // multi-allelic: dropped (--max-alleles 2)
    const auto* code = plan_->Code(IntAt(b.contig, row));
    if (code == nullptr || !*code)
      return CorruptError(s.Describe() + ": variant " + std::to_string(v0 + row) + ": bad contig");
    out->append(**code);
    out->push_back('\t');
    if (b.id) {
      AppendStrings(b.id->strings, row * b.id->row_elems, b.id->row_elems, out);
    } else {
      out->push_back('.');
    }
    out->append("\t0\t");
    AppendInt(out, IntAt(b.position, row));
    out->push_back('\t');
    out->append(alt);
    out->push_back('\t');
    AppendStrings(b.allele.strings, row * na, 1, out);
    out->push_back('\n');
  }
  return OkStatus();
}

PlinkFamSource::PlinkFamSource(std::shared_ptr<const Store> store, std::string name)
    : store_(std::move(store)), name_(std::move(name)) {}

uint64_t PlinkFamSource::ChunkCount() const {
  return (store_->samples().size() + kSamplesPerChunk - 1) / kSamplesPerChunk;
}

Status PlinkFamSource::RenderChunk(uint64_t k, std::string* out) const {
  const auto& ids = store_->samples();
  const uint64_t end = std::min<uint64_t>((k + 1) * kSamplesPerChunk, ids.size());
  for (uint64_t i = k * kSamplesPerChunk; i < end; ++i) {
    out->append(ids[i]).append("\t").append(ids[i]).append("\t0\t0\t0\t-9\n");
  }
  return OkStatus();
}

}  // namespace omicsfs::text
