#include "text/vcf_source.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include "formats/vcz/values.h"
#include "text/number_format.h"
#include "text/raw_text.h"
#include "text/tabix_index.h"
#include "text/vcf_record.h"
#include "text/vcf_samples.h"

namespace omicsfs::text {
namespace {

using formats::zarr::DenseBlock;
using formats::zarr::DType;
using formats::zarr::IsString;

using formats::vcz::AllMissing;
using formats::vcz::Bits;
using formats::vcz::FloatAt;
using formats::vcz::kFloatFill;
using formats::vcz::kFloatMissing;
using formats::vcz::kIntFill;
using formats::vcz::kIntMissing;
using formats::vcz::StringMissing;
using formats::zarr::IntAt;

// Append-only output: writers reserve, write through a pointer and commit.
using Out = RawText;

using vcf::kMaxIntChars;
using vcf::PutInts;
using vcf::WriteUnsigned;

template <typename T>
void WriteInts(const DenseBlock& b, uint64_t first, uint64_t n, char sep, Out* out) {
  out->Commit(PutInts(out->Reserve(n * kMaxIntChars), b.data<T>() + first, n, sep));
}

// What PutInts writes for `entries` consecutive entries of n values each, counted: the sizing
// pass measures the per-sample columns (nearly all of a VCF's text) without writing them, a
// field at a time. Without branches on the data (digit counts by comparisons, an entry's end at
// its first fill by a mask): branching per value cost more than writing the digits did.
template <typename T>
inline uint32_t DigitsOf(std::make_unsigned_t<T> u) {  // in T's width: vectorisable
  using U = std::make_unsigned_t<T>;
  constexpr int kMax = std::numeric_limits<T>::digits10 + 1;  // digits of T's widest value
  uint32_t n = 1;
  U p = 10;
  for (int d = 1; d < kMax; ++d, p = static_cast<U>(p * 10)) n += u >= p;
  return n;
}

// Characters of one value that is not a fill: '.' for missing, else [-]digits.
template <typename T>
inline uint32_t ValueChars(T x) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    const U magnitude = x < 0 ? static_cast<U>(U{0} - static_cast<U>(x)) : static_cast<U>(x);
    return (x < 0) + DigitsOf<T>(magnitude) -
           (x == static_cast<T>(kIntMissing));  // "-1" is written "."
  } else {
    return DigitsOf<T>(x);
  }
}

template <typename T>
uint64_t IntsLength(const T* v, uint64_t entries, uint64_t n) {
  uint64_t len = 0;
  constexpr bool kFills = std::is_signed_v<T>;  // an entry ends at its first fill
  const T fill = static_cast<T>(kFills ? kIntFill : 0);
  if (n == 1) {  // DP, GQ...: one flat loop
    for (uint64_t e = 0; e < entries; ++e) len += (!kFills || v[e] != fill) * ValueChars(v[e]);
  } else if (n == 2) {  // GT, AD of diploids
    for (uint64_t e = 0; e < entries; ++e) {
      const T a = v[2 * e], b = v[2 * e + 1];
      const uint32_t a_in = !kFills || a != fill, b_in = a_in & (!kFills || b != fill);
      len += a_in * ValueChars(a) + b_in * (1 + ValueChars(b));
    }
  } else {
    for (uint64_t e = 0; e < entries; ++e, v += n) {
      uint32_t alive = 1;
      for (uint64_t c = 0; c < n; ++c) {
        alive &= !kFills || v[c] != fill;
        len += alive * ((c > 0) + ValueChars(v[c]));
      }
    }
  }
  return len;
}

// Entries [first, first + entries) of an integer block, n values each, counted.
uint64_t IntEntriesLength(const DenseBlock& b, uint64_t first, uint64_t entries, uint64_t n) {
  const uint64_t at = first * n;
  switch (b.dtype) {
    case DType::kInt8:
      return IntsLength(b.data<int8_t>() + at, entries, n);
    case DType::kInt16:
      return IntsLength(b.data<int16_t>() + at, entries, n);
    case DType::kInt32:
      return IntsLength(b.data<int32_t>() + at, entries, n);
    case DType::kInt64:
      return IntsLength(b.data<int64_t>() + at, entries, n);
    case DType::kUInt16:
      return IntsLength(b.data<uint16_t>() + at, entries, n);
    case DType::kUInt32:
      return IntsLength(b.data<uint32_t>() + at, entries, n);
    case DType::kUInt64:
      return IntsLength(b.data<uint64_t>() + at, entries, n);
    default:
      return IntsLength(b.data<uint8_t>() + at, entries, n);  // kUInt8, kBool
  }
}

void WriteOther(const DenseBlock& b, uint64_t first, uint64_t n, char sep, Out* out) {
  if (IsString(b.dtype)) {
    for (uint64_t c = 0; c < n; ++c) {
      const std::string& s = b.strings[first + c];
      if (c > 0 && !s.empty() && s[0] != '\0') out->Put(',');
      for (char ch : s) {
        if (ch != '\0') out->Put(ch);
      }
    }
    return;
  }
  std::string tmp;
  for (uint64_t c = 0; c < n; ++c) {
    float f = FloatAt(b, first + c);
    uint32_t u = Bits(f);
    if (u == kFloatFill) break;
    if (c > 0) out->Put(sep);
    if (u == kFloatMissing) {
      out->Put('.');
    } else {
      tmp.clear();
      AppendVcfFloat(&tmp, f);
      out->Put(tmp);
    }
  }
}

using EntryWriter = void (*)(const DenseBlock&, uint64_t, uint64_t, char, Out*);

// The writer of one entry (values [first, first+n)) as vcztools writes it, resolved per dtype.
EntryWriter WriterFor(DType t) {
  switch (t) {
    case DType::kInt8:
      return &WriteInts<int8_t>;
    case DType::kInt16:
      return &WriteInts<int16_t>;
    case DType::kInt32:
      return &WriteInts<int32_t>;
    case DType::kInt64:
      return &WriteInts<int64_t>;
    case DType::kUInt8:
    case DType::kBool:
      return &WriteInts<uint8_t>;
    case DType::kUInt16:
      return &WriteInts<uint16_t>;
    case DType::kUInt32:
      return &WriteInts<uint32_t>;
    case DType::kUInt64:
      return &WriteInts<uint64_t>;
    default:
      return &WriteOther;
  }
}

void WriteEntry(const DenseBlock& b, uint64_t first, uint64_t n, char sep, Out* out) {
  WriterFor(b.dtype)(b, first, n, sep, out);
}

// A fixed column: '.' when all missing, else the entry.
void WriteFixed(const DenseBlock& b, uint64_t row, Out* out) {
  const uint64_t n = b.row_elems;
  if (AllMissing(b, row * n, n)) {
    out->Put('.');
  } else {
    WriteEntry(b, row * n, n, ',', out);
  }
}

}  // namespace

VcfSource::VcfSource(std::shared_ptr<const formats::vcz::Store> store, View view, std::string name,
                     uint64_t target_chunk_bytes)
    : store_(std::move(store)), view_(view), name_(std::move(name)) {
  // Records per chunk: about kTargetChunkBytes of text (a rough per-record estimate), in equal
  // parts of one variants-chunk of the store, so that a `tail` or a random read renders little
  // and neighbouring chunks share the decoded Zarr chunks through the cache.
  const uint64_t ns = with_samples() ? store_->samples().size() : 0;
  const uint64_t estimate = 64 + 8 * store_->info().size() + ns * (4 + 6 * store_->format().size());
  const uint64_t range = store_->range_rows();
  const uint64_t want = std::clamp<uint64_t>(target_chunk_bytes / estimate, 1, range);
  const uint64_t parts = (range + want - 1) / want;
  rows_per_chunk_ = (range + parts - 1) / parts;
}

uint64_t VcfSource::ChunkCount() const {
  const uint64_t r = rows_per_chunk_;
  return 1 + (store_->num_variants() + r - 1) / r;
}

namespace {

// bcftools view -s appends these where the header lacks them (bcf_hdr_append: before #CHROM).
constexpr const char* kAcLine =
    "##INFO=<ID=AC,Number=A,Type=Integer,Description=\"Allele count in genotypes\">\n";
constexpr const char* kAnLine =
    "##INFO=<ID=AN,Number=1,Type=Integer,Description=\"Total number of alleles in called "
    "genotypes\">\n";

// bcftools view -s declares AC and AN whenever it subsets samples, recounting or not (a store
// or a slice without GT).
bool CountsInHeader(const formats::vcz::Store& s) {
  return s.subset() != nullptr && s.subset()->samples.has_value();
}

// A stored header (spec 0.3) fitted to a slice: dropped FORMAT fields' lines removed, the AC/AN
// lines bcftools adds, the chosen samples on the #CHROM line.
std::string FitHeader(const std::string& stored, const formats::vcz::Store& s, bool sites) {
  std::string h;
  const formats::vcz::Subset* subset = s.subset();
  size_t at = 0;
  bool has_ac = false, has_an = false;
  while (at < stored.size()) {
    size_t end = stored.find('\n', at);
    end = end == std::string::npos ? stored.size() : end + 1;
    std::string_view line(stored.data() + at, end - at);
    at = end;
    if (line.starts_with("##INFO=<ID=AC,")) has_ac = true;
    if (line.starts_with("##INFO=<ID=AN,")) has_an = true;
    if (line.starts_with("##FORMAT=<ID=") && subset != nullptr && subset->format) {
      const std::string_view rest = line.substr(13);
      const std::string_view key = rest.substr(0, rest.find_first_of(",>"));
      if (std::find(subset->format->begin(), subset->format->end(), key) == subset->format->end())
        continue;
    }
    if (line.starts_with("#CHROM")) {
      if (CountsInHeader(s) && !has_ac) h += kAcLine;
      if (CountsInHeader(s) && !has_an) h += kAnLine;
      if (sites || (subset != nullptr && subset->samples)) {
        size_t info = line.find("\tINFO");
        h.append(line.substr(0, info == std::string_view::npos ? line.size() : info + 5));
        if (!sites && info != std::string_view::npos) {
          h += "\tFORMAT";
          for (const auto& id : s.samples()) h += "\t" + id;
        }
        h.push_back('\n');
        continue;
      }
    }
    h.append(line);
  }
  return h;
}

}  // namespace

std::string VcfSource::Header() const {
  const auto& s = *store_;
  const bool samples = with_samples();
  if (s.vcf_header())
    return FitHeader(*s.vcf_header(), s, view_ == View::kSites);  // spec 0.3: the original header
  std::string h;
  h += "##fileformat=VCFv4.3\n";
  if (s.source()) h += "##source=" + *s.source() + "\n";
  bool has_ac = false, has_an = false;
  for (const auto& f : s.info()) {
    h += "##INFO=<ID=" + f.key + ",Number=" + f.number + ",Type=" + f.type + ",Description=\"" +
         f.description + "\">\n";
    has_ac = has_ac || f.key == "AC";
    has_an = has_an || f.key == "AN";
  }
  for (size_t i = 0; i < s.filters().size(); ++i) {
    const std::string desc = i < s.filter_descriptions().size() ? s.filter_descriptions()[i] : "";
    h += "##FILTER=<ID=" + s.filters()[i] + ",Description=\"" + desc + "\">\n";
  }
  if (samples) {
    if (s.has_genotype()) h += "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n";
    for (const auto& f : s.format()) {
      h += "##FORMAT=<ID=" + f.key + ",Number=" + f.number + ",Type=" + f.type + ",Description=\"" +
           f.description + "\">\n";
    }
  }
  for (size_t i = 0; i < s.contigs().size(); ++i) {
    h += "##contig=<ID=" + s.contigs()[i];
    if (s.contig_lengths() && i < s.contig_lengths()->size()) {
      h += ",length=";
      AppendInt(&h, (*s.contig_lengths())[i]);
    }
    h += ">\n";
  }
  for (const auto& [key, value] : s.meta_information()) {
    if (key != "fileformat" && key != "source") h += "##" + key + "=" + value + "\n";
  }
  if (CountsInHeader(s) && !has_ac) h += kAcLine;
  if (CountsInHeader(s) && !has_an) h += kAnLine;
  h += "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO";
  if (samples) {
    h += "\tFORMAT";
    for (const auto& id : s.samples()) h += "\t" + id;
  }
  h += "\n";
  return h;
}

Status VcfSource::RenderChunk(uint64_t k, std::string* out) const {
  if (k == 0) {
    out->append(Header());
    return OkStatus();
  }
  return Render(k, out, nullptr);
}

Result<std::optional<uint64_t>> VcfSource::MeasureChunk(uint64_t k) const {
  if (k == 0) return std::optional<uint64_t>();  // the header is rendered
  std::string text;
  uint64_t samples = 0;
  RETURN_IF_ERROR(Render(k, &text, &samples));
  return std::optional<uint64_t>(text.size() + samples);
}

Status VcfSource::RecordSpans(uint64_t k, ChunkSpans* out) const {
  if (k == 0) {  // the header: meta lines only
    out->meta_end = out->length = Header().size();
    return OkStatus();
  }
  std::string text;
  uint64_t samples = 0;
  std::vector<std::pair<uint64_t, uint64_t>> rows;
  RETURN_IF_ERROR(Render(k, &text, &samples, &rows));
  out->length = text.size() + samples;
  uint64_t line_start = 0;
  for (const auto& [text_end, measured] : rows) {
    std::string_view line(text.data() + line_start, text_end - 1 - line_start);
    line_start = text_end;
    std::string_view contig;
    RecordSpan r;
    if (!ParseTabixLine(TabixPreset::kVcf, line, &contig, &r.begin, &r.end)) continue;
    if (!contig.empty() && contig[0] == '#') continue;  // tabix reads it as a header line
    if (out->contigs.empty() || out->contigs.back() != contig) out->contigs.emplace_back(contig);
    r.contig = static_cast<uint32_t>(out->contigs.size() - 1);
    r.end_in_chunk = text_end + measured;
    out->records.push_back(r);
  }
  return OkStatus();
}

namespace {

// CHROM, POS, ID, REF, ALT and QUAL of a record, each followed by '\t'. `variant`: its index, for
// the error.
Status WriteFixedColumns(const formats::vcz::Store& s, const formats::vcz::VariantBlock& b,
                         uint64_t row, uint64_t variant, Out* o) {
  const auto& contigs = s.contigs();
  const int64_t c = IntAt(b.contig, row);
  if (c < 0 || static_cast<uint64_t>(c) >= contigs.size()) {
    return CorruptError(s.Describe() + ": variant " + std::to_string(variant) + ": contig index " +
                        std::to_string(c) + " is out of range");
  }
  o->Put(StringMissing(contigs[c]) ? std::string_view(".") : std::string_view(contigs[c]));
  o->Put('\t');
  WriteFixed(b.position, row, o);
  o->Put('\t');
  if (b.id)
    WriteFixed(*b.id, row, o);
  else
    o->Put('.');
  o->Put('\t');
  const uint64_t na = b.allele.row_elems;
  const std::string& ref = b.allele.strings[row * na];
  if (StringMissing(ref))
    o->Put('.');
  else
    WriteEntry(b.allele, row * na, 1, ',', o);
  o->Put('\t');
  if (na < 2 || AllMissing(b.allele, row * na + 1, na - 1)) {
    o->Put('.');
  } else {
    WriteEntry(b.allele, row * na + 1, na - 1, ',', o);
  }
  o->Put('\t');
  if (b.quality)
    WriteFixed(*b.quality, row, o);
  else
    o->Put('.');
  o->Put('\t');
  return OkStatus();
}

// The FILTER column: the filters set, joined by ';', '.' when none (without variant_filter: the
// first of filter_id).
Status WriteFilter(const formats::vcz::Store& s, const formats::vcz::VariantBlock& b, uint64_t row,
                   Out* o) {
  const auto& filters = s.filters();
  if (!b.filter) {
    o->Put(filters.empty() ? "." : filters[0]);
    return OkStatus();
  }
  const uint64_t nf = b.filter->row_elems;
  bool any = false;
  for (uint64_t j = 0; j < nf; ++j) {
    if (IntAt(*b.filter, row * nf + j) == 0) continue;
    if (j >= filters.size()) {
      return CorruptError(s.Describe() + ": variant_filter has more columns than filter_id");
    }
    if (any) o->Put(';');
    o->Put(filters[j]);
    any = true;
  }
  if (!any) o->Put('.');
  return OkStatus();
}

// A record's AC and AN recounted from the chosen samples' GT (a slice of samples, bcftools
// view -s): AC per ALT allele, AN the called alleles.
class Recount {
 public:
  // The recount of a row; none where the stored values stand (not a slice of samples, or its GT
  // not shown).
  static std::optional<Recount> Of(const formats::vcz::VariantBlock& b, uint64_t row) {
    if (b.recounted.empty() || !b.recounted[row]) return std::nullopt;
    Recount r;
    const uint64_t slots = b.allele.row_elems;
    for (uint64_t a = 1; a < slots; ++a) {
      r.alts_ += !StringMissing(b.allele.strings[row * slots + a]);
    }
    r.counts_ = &b.allele_counts[row * slots];
    for (uint64_t a = 0; a < slots; ++a) r.an_ += r.counts_[a];
    return r;
  }
  // bcftools removes AC from a record without an ALT allele.
  bool has_ac() const { return alts_ > 0; }
  void WriteAc(Out* o) const {
    o->Put("AC=");
    for (uint64_t a = 1; a <= alts_; ++a) {
      if (a > 1) o->Put(',');
      o->Commit(WriteUnsigned(o->Reserve(kMaxIntChars), counts_[a]));
    }
  }
  void WriteAn(Out* o) const {
    o->Put("AN=");
    o->Commit(WriteUnsigned(o->Reserve(kMaxIntChars), an_));
  }

 private:
  const uint32_t* counts_ = nullptr;  // per allele, REF first
  uint64_t alts_ = 0, an_ = 0;
};

// The INFO column: KEY=VALUE (a flag: KEY) of each field holding a value, joined by ';', '.'
// when none. A recounted record takes AC and AN from the recount, in place, else appended after
// the stored fields as bcftools does.
void WriteInfo(const std::vector<formats::vcz::Field>& info, const formats::vcz::VariantBlock& b,
               uint64_t row, Out* o) {
  const std::optional<Recount> recount = Recount::Of(b, row);
  bool any = false;
  auto next = [&] {  // the output, for the next field
    if (any) o->Put(';');
    any = true;
    return o;
  };
  bool ac_done = false, an_done = false;
  for (size_t j = 0; j < b.info.size(); ++j) {
    const DenseBlock& f = b.info[j];
    const uint64_t n = f.row_elems;
    if (AllMissing(f, row * n, n)) continue;
    if (recount && info[j].key == "AC") {
      ac_done = true;
      if (recount->has_ac()) recount->WriteAc(next());
      continue;
    }
    if (recount && info[j].key == "AN") {
      an_done = true;
      recount->WriteAn(next());
      continue;
    }
    next()->Put(info[j].key);
    if (f.dtype != DType::kBool) {
      o->Put('=');
      WriteEntry(f, row * n, n, ',', o);
    }
  }
  if (recount && !ac_done && recount->has_ac()) recount->WriteAc(next());
  if (recount && !an_done) recount->WriteAn(next());
  if (!any) o->Put('.');
}

// The FORMAT column and the sample columns of one block's records. A record shows GT and each
// FORMAT field where any sample holds a value; its sample columns are then written one of three
// ways: every shown field an integer array — field by field and interleaved (WriteIntSamples), or
// only counted when measuring; else entry by entry. The per-field choices are made once a block.
// (Here, not in vcf_samples.cc: more code in that unit changed GCC's -O3 code for WriteIntSamples,
// measured 3-5 % slower.)
class SampleWriter {
 public:
  // `fields`: the store's FORMAT fields (parallel to b.format); ns > 0 samples. Both must outlive
  // the writer.
  SampleWriter(const formats::vcz::VariantBlock& b, const std::vector<formats::vcz::Field>& fields,
               uint64_t ns)
      : b_(b), fields_(fields), ns_(ns) {
    if (b.genotype) {
      ploidy_ = b.genotype->row_elems / ns;
      gt_writer_ = WriterFor(b.genotype->dtype);
    }
    for (const DenseBlock& f : b.format) {
      per_sample_.push_back(f.row_elems / ns);
      writers_.push_back(WriterFor(f.dtype));
    }
    shown_.reserve(b.format.size());
  }

  // Row `row`'s '\t', FORMAT column and sample columns. With `measured`, all-integer sample
  // columns are not written but their length added to *measured.
  void Write(uint64_t row, Out* o, uint64_t* measured) {
    o->Put('\t');
    if (!Shown(row)) {
      o->Put('.');
      for (uint64_t smp = 0; smp < ns_; ++smp) o->Put("\t.");
      return;
    }
    WriteKeys(o);
    if (!all_ints_) {
      WriteEntries(row, o);
    } else if (measured != nullptr) {  // sizing: the sample columns counted, not written
      *measured += MeasureInts(row);
    } else {  // the common case: field by field into slots, then interleaved
      WriteInts(row, o);
    }
  }

 private:
  // Which fields the row shows (gt_shown_, shown_), and whether all are integer arrays; false
  // when none.
  bool Shown(uint64_t row) {
    vcf::ShownFields(b_, row, &gt_shown_, &shown_);
    all_ints_ = !gt_shown_ || vcf::IsIntType(b_.genotype->dtype);
    for (size_t j : shown_) all_ints_ = all_ints_ && vcf::IsIntType(b_.format[j].dtype);
    return gt_shown_ || !shown_.empty();
  }

  // "GT:AD:DP": the shown fields' keys.
  void WriteKeys(Out* o) const {
    bool first = true;
    if (gt_shown_) {
      o->Put("GT");
      first = false;
    }
    for (size_t j : shown_) {
      if (!first) o->Put(':');
      first = false;
      o->Put(fields_[j].key);
    }
  }

  uint64_t MeasureInts(uint64_t row) const {
    uint64_t len = ns_ * ((gt_shown_ ? 1 : 0) + shown_.size());  // '\t' and ':'s
    if (gt_shown_) len += IntEntriesLength(*b_.genotype, row * ns_, ns_, ploidy_);
    for (size_t j : shown_) len += IntEntriesLength(b_.format[j], row * ns_, ns_, per_sample_[j]);
    return len;
  }

  void WriteInts(uint64_t row, Out* o) {
    columns_.clear();
    if (gt_shown_) {
      const DenseBlock& g = *b_.genotype;
      columns_.push_back({g.dtype, g.raw() + row * ns_ * ploidy_ * g.elem_size, ploidy_});
    }
    for (size_t j : shown_) {
      const DenseBlock& f = b_.format[j];
      const uint64_t n = per_sample_[j];
      columns_.push_back({f.dtype, f.raw() + row * ns_ * n * f.elem_size, n});
    }
    const uint8_t* phased = gt_shown_ && b_.phased
                                ? reinterpret_cast<const uint8_t*>(b_.phased->raw()) + row * ns_
                                : nullptr;
    char* p = o->Reserve(vcf::IntSamplesBound(columns_.data(), columns_.size(), ns_));
    o->Commit(vcf::WriteIntSamples(p, columns_.data(), columns_.size(), ns_, gt_shown_, phased));
  }

  void WriteEntries(uint64_t row, Out* o) const {
    for (uint64_t smp = 0; smp < ns_; ++smp) {
      o->Put('\t');
      bool first = true;
      if (gt_shown_) {
        const bool phased = b_.phased && b_.phased->raw()[row * ns_ + smp] != 0;
        gt_writer_(*b_.genotype, (row * ns_ + smp) * ploidy_, ploidy_, phased ? '|' : '/', o);
        first = false;
      }
      for (size_t j : shown_) {
        if (!first) o->Put(':');
        first = false;
        writers_[j](b_.format[j], (row * ns_ + smp) * per_sample_[j], per_sample_[j], ',', o);
      }
    }
  }

  const formats::vcz::VariantBlock& b_;
  const std::vector<formats::vcz::Field>& fields_;
  const uint64_t ns_;
  uint64_t ploidy_ = 0;               // values per sample of GT
  std::vector<uint64_t> per_sample_;  // values per sample of each FORMAT field
  std::vector<EntryWriter> writers_;  // of each FORMAT field
  EntryWriter gt_writer_ = nullptr;
  // The current row's shown fields: GT, then FORMAT fields by index; all integer arrays?
  bool gt_shown_ = false;
  std::vector<size_t> shown_;
  bool all_ints_ = false;
  std::vector<vcf::IntColumn> columns_;  // WriteInts' scratch
};

}  // namespace

Status VcfSource::Render(uint64_t k, std::string* out, uint64_t* measured,
                         std::vector<std::pair<uint64_t, uint64_t>>* rows) const {
  const auto& s = *store_;
  const uint64_t r = rows_per_chunk_;
  const uint64_t v0 = (k - 1) * r, v1 = std::min(v0 + r, s.num_variants());
  if (v0 >= v1) return OkStatus();
  const bool samples = with_samples();
  ASSIGN_OR_RETURN(formats::vcz::VariantBlock b, s.Read(v0, v1, samples, /*reverse=*/k % 2 == 0));
  std::optional<SampleWriter> sample_writer;
  if (samples) sample_writer.emplace(b, s.format(), s.samples().size());
  Out o(out);
  for (uint64_t row = 0; row < b.count; ++row) {
    RETURN_IF_ERROR(WriteFixedColumns(s, b, row, v0 + row, &o));
    RETURN_IF_ERROR(WriteFilter(s, b, row, &o));
    o.Put('\t');
    WriteInfo(s.info(), b, row, &o);
    if (sample_writer) sample_writer->Write(row, &o, measured);
    o.Put('\n');
    if (rows != nullptr) rows->emplace_back(o.written(), measured ? *measured : 0);
  }
  return OkStatus();
}

namespace vcf {

void ShownFields(const formats::vcz::VariantBlock& b, uint64_t row, bool* gt,
                 std::vector<size_t>* shown) {
  // A field is shown when any sample holds a value (of the whole store: a slice of samples
  // keeps the parent's FORMAT column, as bcftools view -s does).
  const bool given = !b.present.empty();
  const uint8_t* present = given ? &b.present[row * (1 + b.format.size())] : nullptr;
  *gt = false;
  if (b.genotype) {
    const uint64_t n = b.genotype->row_elems;
    *gt = given ? present[0] != 0 : !AllMissing(*b.genotype, row * n, n);
  }
  shown->clear();
  for (size_t j = 0; j < b.format.size(); ++j) {
    const uint64_t n = b.format[j].row_elems;
    if (given ? present[1 + j] == 0 : AllMissing(b.format[j], row * n, n)) continue;
    shown->push_back(j);
  }
}

Status WriteSiteColumns(const formats::vcz::Store& s, const formats::vcz::VariantBlock& b,
                        uint64_t row, uint64_t variant, RawText* o) {
  RETURN_IF_ERROR(WriteFixedColumns(s, b, row, variant, o));
  RETURN_IF_ERROR(WriteFilter(s, b, row, o));
  o->Put('\t');
  WriteInfo(s.info(), b, row, o);
  return OkStatus();
}

void WriteEntry(const formats::zarr::DenseBlock& b, uint64_t first, uint64_t n, char sep,
                RawText* o) {
  text::WriteEntry(b, first, n, sep, o);
}

}  // namespace vcf

}  // namespace omicsfs::text
