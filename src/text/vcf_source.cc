#include "text/vcf_source.h"

#include <algorithm>
#include <cstring>

#include "text/number_format.h"

namespace omicsfs::text {
namespace {

using formats::zarr::DenseBlock;
using formats::zarr::DType;
using formats::zarr::IsString;

constexpr int64_t kIntMissing = -1, kIntFill = -2;
constexpr uint32_t kFloatMissing = 0x7F800001u, kFloatFill = 0x7F800002u;

int64_t IntAt(const DenseBlock& b, uint64_t i) {
  const char* p = b.bytes.data() + i * b.elem_size;
  switch (b.dtype) {
    case DType::kBool: case DType::kUInt8: return static_cast<uint8_t>(*p);
    case DType::kInt8: return static_cast<int8_t>(*p);
    case DType::kInt16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::kUInt16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kUInt32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { int64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

float FloatAt(const DenseBlock& b, uint64_t i) {
  if (b.dtype == DType::kFloat64) {
    double d;
    std::memcpy(&d, b.bytes.data() + i * 8, 8);
    return static_cast<float>(d);
  }
  float f;
  std::memcpy(&f, b.bytes.data() + i * 4, 4);
  return f;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

bool IsFloat(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }

bool StringMissing(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '.' || c == '\0'; });
}

// True when values [first, first+n) are all missing or fill (Flag: false).
bool AllMissing(const DenseBlock& b, uint64_t first, uint64_t n) {
  if (b.dtype == DType::kBool) return IntAt(b, first) == 0;
  for (uint64_t i = first; i < first + n; ++i) {
    if (IsString(b.dtype)) {
      if (!StringMissing(b.strings[i])) return false;
    } else if (IsFloat(b.dtype)) {
      uint32_t u = Bits(FloatAt(b, i));
      if (u != kFloatMissing && u != kFloatFill) return false;
    } else {
      int64_t v = IntAt(b, i);
      if (v != kIntMissing && v != kIntFill) return false;
    }
  }
  return true;
}

// One entry (values [first, first+n)) as vcztools writes it.
void WriteEntry(const DenseBlock& b, uint64_t first, uint64_t n, char sep, std::string* out) {
  if (IsString(b.dtype)) {
    for (uint64_t c = 0; c < n; ++c) {
      const std::string& s = b.strings[first + c];
      if (c > 0 && !s.empty() && s[0] != '\0') out->push_back(',');
      for (char ch : s) {
        if (ch != '\0') out->push_back(ch);
      }
    }
    return;
  }
  for (uint64_t c = 0; c < n; ++c) {
    if (IsFloat(b.dtype)) {
      float f = FloatAt(b, first + c);
      uint32_t u = Bits(f);
      if (u == kFloatFill) break;
      if (c > 0) out->push_back(sep);
      if (u == kFloatMissing) {
        out->push_back('.');
      } else {
        AppendVcfFloat(out, f);
      }
    } else {
      int64_t v = IntAt(b, first + c);
      if (v == kIntFill) break;
      if (c > 0) out->push_back(sep);
      if (v == kIntMissing) {
        out->push_back('.');
      } else {
        AppendInt(out, v);
      }
    }
  }
}

// A fixed column: '.' when all missing, else the entry.
void WriteFixed(const DenseBlock& b, uint64_t row, std::string* out) {
  const uint64_t n = b.row_elems;
  if (AllMissing(b, row * n, n)) {
    out->push_back('.');
  } else {
    WriteEntry(b, row * n, n, ',', out);
  }
}

}  // namespace

VcfSource::VcfSource(std::shared_ptr<const formats::vcz::Store> store, View view, std::string name)
    : store_(std::move(store)), view_(view), name_(std::move(name)) {}

uint64_t VcfSource::ChunkCount() const {
  const uint64_t r = store_->range_rows();
  return 1 + (store_->num_variants() + r - 1) / r;
}

std::string VcfSource::Header() const {
  const auto& s = *store_;
  const bool samples = with_samples();
  std::string h;
  if (s.vcf_header()) {  // spec 0.3: the original header, verbatim
    h = *s.vcf_header();
    if (view_ == View::kSites) {
      size_t line = h.rfind("\n#CHROM");
      size_t start = line == std::string::npos ? 0 : line + 1;
      size_t info = h.find("\tINFO", start);
      if (info != std::string::npos) {
        h.resize(info + 5);
        h.push_back('\n');
      }
    }
    return h;
  }
  h += "##fileformat=VCFv4.3\n";
  if (s.source()) h += "##source=" + *s.source() + "\n";
  for (const auto& f : s.info()) {
    h += "##INFO=<ID=" + f.key + ",Number=" + f.number + ",Type=" + f.type + ",Description=\"" + f.description + "\">\n";
  }
  for (size_t i = 0; i < s.filters().size(); ++i) {
    const std::string desc = i < s.filter_descriptions().size() ? s.filter_descriptions()[i] : "";
    h += "##FILTER=<ID=" + s.filters()[i] + ",Description=\"" + desc + "\">\n";
  }
  if (samples) {
    if (s.has_genotype()) h += "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n";
    for (const auto& f : s.format()) {
      h += "##FORMAT=<ID=" + f.key + ",Number=" + f.number + ",Type=" + f.type + ",Description=\"" + f.description + "\">\n";
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
  const auto& s = *store_;
  const uint64_t r = s.range_rows();
  const uint64_t v0 = (k - 1) * r, v1 = std::min(v0 + r, s.num_variants());
  if (v0 >= v1) return OkStatus();
  const bool samples = with_samples();
  ASSIGN_OR_RETURN(formats::vcz::VariantBlock b, s.Read(v0, v1, samples));
  const uint64_t ns = samples ? s.samples().size() : 0;
  const auto& contigs = s.contigs();
  const auto& filters = s.filters();

  for (uint64_t row = 0; row < b.count; ++row) {
    // CHROM
    int64_t c = IntAt(b.contig, row);
    if (c < 0 || static_cast<uint64_t>(c) >= contigs.size()) {
      return CorruptError(s.Describe() + ": variant " + std::to_string(v0 + row) + ": contig index " + std::to_string(c) + " is out of range");
    }
    out->append(StringMissing(contigs[c]) ? "." : contigs[c]);
    out->push_back('\t');
    // POS
    WriteFixed(b.position, row, out);
    out->push_back('\t');
    // ID
    if (b.id) WriteFixed(*b.id, row, out); else out->push_back('.');
    out->push_back('\t');
    // REF, ALT
    const uint64_t na = b.allele.row_elems;
    const std::string& ref = b.allele.strings[row * na];
    if (StringMissing(ref)) out->push_back('.'); else WriteEntry(b.allele, row * na, 1, ',', out);
    out->push_back('\t');
    if (na < 2 || AllMissing(b.allele, row * na + 1, na - 1)) {
      out->push_back('.');
    } else {
      WriteEntry(b.allele, row * na + 1, na - 1, ',', out);
    }
    out->push_back('\t');
    // QUAL
    if (b.quality) WriteFixed(*b.quality, row, out); else out->push_back('.');
    out->push_back('\t');
    // FILTER
    if (!b.filter) {
      out->append(filters.empty() ? "." : filters[0]);
    } else {
      const uint64_t nf = b.filter->row_elems;
      bool any = false;
      for (uint64_t j = 0; j < nf; ++j) {
        if (IntAt(*b.filter, row * nf + j) == 0) continue;
        if (j >= filters.size()) return CorruptError(s.Describe() + ": variant_filter has more columns than filter_id");
        if (any) out->push_back(';');
        out->append(filters[j]);
        any = true;
      }
      if (!any) out->push_back('.');
    }
    out->push_back('\t');
    // INFO
    bool any_info = false;
    for (size_t j = 0; j < b.info.size(); ++j) {
      const DenseBlock& f = b.info[j];
      const uint64_t n = f.row_elems;
      if (AllMissing(f, row * n, n)) continue;
      if (any_info) out->push_back(';');
      any_info = true;
      out->append(s.info()[j].key);
      if (f.dtype != DType::kBool) {
        out->push_back('=');
        WriteEntry(f, row * n, n, ',', out);
      }
    }
    if (!any_info) out->push_back('.');
    // FORMAT and samples
    if (ns > 0) {
      out->push_back('\t');
      bool gt_present = false;
      uint64_t ploidy = 0;
      if (b.genotype) {
        ploidy = b.genotype->row_elems / ns;
        gt_present = !AllMissing(*b.genotype, row * ns * ploidy, ns * ploidy);
      }
      std::vector<bool> present(b.format.size());
      bool any = gt_present;
      for (size_t j = 0; j < b.format.size(); ++j) {
        const uint64_t n = b.format[j].row_elems;
        present[j] = !AllMissing(b.format[j], row * n, n);
        any = any || present[j];
      }
      if (!any) {
        out->push_back('.');
        for (uint64_t smp = 0; smp < ns; ++smp) out->append("\t.");
      } else {
        bool first = true;
        if (gt_present) {
          out->append("GT");
          first = false;
        }
        for (size_t j = 0; j < b.format.size(); ++j) {
          if (!present[j]) continue;
          if (!first) out->push_back(':');
          first = false;
          out->append(s.format()[j].key);
        }
        for (uint64_t smp = 0; smp < ns; ++smp) {
          out->push_back('\t');
          bool first_value = true;
          if (gt_present) {
            const bool phased = b.phased && IntAt(*b.phased, row * ns + smp) != 0;
            WriteEntry(*b.genotype, (row * ns + smp) * ploidy, ploidy, phased ? '|' : '/', out);
            first_value = false;
          }
          for (size_t j = 0; j < b.format.size(); ++j) {
            if (!present[j]) continue;
            if (!first_value) out->push_back(':');
            first_value = false;
            const uint64_t per = b.format[j].row_elems / ns;
            WriteEntry(b.format[j], (row * ns + smp) * per, per, ',', out);
          }
        }
      }
    }
    out->push_back('\n');
  }
  return OkStatus();
}

}  // namespace omicsfs::text
