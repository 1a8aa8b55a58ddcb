#include "text/bcf_source.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "formats/vcz/values.h"
#include "text/raw_text.h"
#include "text/vcf_record.h"

namespace omicsfs::text {
namespace {

using formats::vcz::kIntFill;
using formats::vcz::kIntMissing;
using formats::zarr::DenseBlock;
using formats::zarr::DType;

// Calls f with the block's values typed (integer dtypes and bool only).
template <typename F>
auto WithInts(const DenseBlock& b, F&& f) {
  switch (b.dtype) {
    case DType::kInt8:
      return f(b.data<int8_t>());
    case DType::kInt16:
      return f(b.data<int16_t>());
    case DType::kInt32:
      return f(b.data<int32_t>());
    case DType::kInt64:
      return f(b.data<int64_t>());
    case DType::kUInt16:
      return f(b.data<uint16_t>());
    case DType::kUInt32:
      return f(b.data<uint32_t>());
    case DType::kUInt64:
      return f(b.data<uint64_t>());
    default:
      return f(b.data<uint8_t>());  // kUInt8, kBool
  }
}

bool IsInts(DType t) {
  return formats::zarr::IsSignedInt(t) || formats::zarr::IsUnsignedInt(t) || t == DType::kBool;
}

// Values of an entry the VCF view writes: up to the first fill (signed types).
template <typename T>
uint64_t EntryLength(const T* v, uint64_t n) {
  if constexpr (std::is_signed_v<T>) {
    uint64_t l = 0;
    while (l < n && v[l] != static_cast<T>(kIntFill)) ++l;
    return l;
  } else {
    return n;
  }
}

// One integer as vcf_parse_format reads the view's text of it: '.' missing, a value outside what
// BCF holds set to missing.
template <typename T>
int32_t AsBcfInt(T x) {
  if constexpr (std::is_signed_v<T>) {
    if (x == static_cast<T>(kIntMissing)) return bcf::kInt32Missing;
    if (static_cast<int64_t>(x) < bcf::kMinInt32) return bcf::kInt32Missing;
  }
  if (static_cast<uint64_t>(x) > INT32_MAX && (std::is_unsigned_v<T> || x > 0))
    return bcf::kInt32Missing;
  return static_cast<int32_t>(x);
}

// The FORMAT part of records being encoded, its scratch reused from record to record.
class FormatEncoder {
 public:
  FormatEncoder(const formats::vcz::Store& s, const formats::vcz::VariantBlock& b,
                const bcf::HeaderDict& dict)
      : s_(s), b_(b), dict_(dict), ns_(s.samples().size()) {}

  // Row `row`'s FORMAT fields into *indiv; *n_fmt of them.
  Status Encode(uint64_t row, uint64_t variant, std::string* indiv, uint32_t* n_fmt) {
    indiv->clear();
    *n_fmt = 0;
    bool gt = false;
    vcf::ShownFields(b_, row, &gt, &shown_);
    if (gt) {
      RETURN_IF_ERROR(Field("GT", *b_.genotype, row, variant, true, indiv));
      ++*n_fmt;
    }
    for (size_t j : shown_) {
      RETURN_IF_ERROR(Field(s_.format()[j].key, b_.format[j], row, variant, false, indiv));
      ++*n_fmt;
    }
    return OkStatus();
  }

 private:
  Status Field(const std::string& key, const DenseBlock& f, uint64_t row, uint64_t variant,
               bool genotype, std::string* out) {
    auto it = dict_.ids.find(key);
    if (it == dict_.ids.end() || it->second.format_type < 0) {
      return CorruptError("variant " + std::to_string(variant) + ": FORMAT/" + key +
                          " is not defined in the header: bcftools writes no BCF of it");
    }
    const int type = it->second.format_type;
    const uint64_t n = f.row_elems / ns_;
    const uint64_t first = row * ns_ * n;
    bcf::PutInt1(out, it->second.idx);
    if (genotype && type == bcf::kHtStr && IsInts(f.dtype)) {
      RETURN_IF_ERROR(WithInts(f, [&](auto* v) { return Genotypes(v + first, n, row, variant); }));
      bcf::PutInts(out, ints_.data(), ints_.size(), static_cast<int64_t>(width_));
      return OkStatus();
    }
    if (!genotype && type == bcf::kHtInt && IsInts(f.dtype)) {
      WithInts(f, [&](auto* v) { return Integers(v + first, n); });
      bcf::PutInts(out, ints_.data(), ints_.size(), static_cast<int64_t>(width_));
      return OkStatus();
    }
    return FromText(key, f, first, n, row, type, genotype, variant, out);
  }

  template <typename T>
  Status Genotypes(const T* v, uint64_t n, uint64_t row, uint64_t variant) {
    width_ = 1;
    for (uint64_t smp = 0; smp < ns_; ++smp) {
      const uint64_t l = EntryLength(v + smp * n, n);
      if (l == 0) {
        return CorruptError("variant " + std::to_string(variant) + ", sample " +
                            std::to_string(smp) + ": GT holds no value (bcftools reads no GT)");
      }
      width_ = std::max(width_, l);
    }
    ints_.assign(ns_ * width_, bcf::kInt32VectorEnd);
    const uint8_t* phased =
        b_.phased ? reinterpret_cast<const uint8_t*>(b_.phased->raw()) + row * ns_ : nullptr;
    for (uint64_t smp = 0; smp < ns_; ++smp) {
      const T* e = v + smp * n;
      const uint64_t l = EntryLength(e, n);
      const int32_t phase = phased != nullptr && phased[smp] != 0 ? 1 : 0;
      int32_t* x = &ints_[smp * width_];
      for (uint64_t i = 0; i < l; ++i) {
        const int32_t p = i > 0 ? phase : 0;
        const auto a = static_cast<int64_t>(e[i]);
        if (a == kIntMissing) {
          x[i] = p;
        } else if (a < 0 || a >= (INT32_MAX >> 1) - 1) {
          return CorruptError("variant " + std::to_string(variant) + ", sample " +
                              std::to_string(smp) + ": allele " + std::to_string(a) +
                              " bcftools cannot read");
        } else {
          x[i] = static_cast<int32_t>((a + 1) << 1) | p;
        }
      }
    }
    return OkStatus();
  }

  template <typename T>
  int Integers(const T* v, uint64_t n) {
    width_ = 1;
    for (uint64_t smp = 0; smp < ns_; ++smp) width_ = std::max(width_, EntryLength(v + smp * n, n));
    ints_.assign(ns_ * width_, bcf::kInt32VectorEnd);
    for (uint64_t smp = 0; smp < ns_; ++smp) {
      const T* e = v + smp * n;
      const uint64_t l = EntryLength(e, n);
      int32_t* x = &ints_[smp * width_];
      if (l == 0) x[0] = bcf::kInt32Missing;  // an empty entry: htslib reads one missing value
      for (uint64_t i = 0; i < l; ++i) x[i] = AsBcfInt(e[i]);
    }
    return 0;
  }

  // Any other field: each sample's entry as the VCF view writes it, read as vcf_parse_format
  // reads it for the header's type.
  Status FromText(const std::string& key, const DenseBlock& f, uint64_t first, uint64_t n,
                  uint64_t row, int type, bool genotype, uint64_t variant, std::string* out) {
    if (type != bcf::kHtInt && type != bcf::kHtReal && type != bcf::kHtStr) {
      return CorruptError("variant " + std::to_string(variant) + ": FORMAT/" + key +
                          " has a type bcftools does not write (Flag)");
    }
    text_.clear();
    ends_.clear();
    {
      RawText o(&text_);
      for (uint64_t smp = 0; smp < ns_; ++smp) {
        char sep = ',';
        if (genotype) {
          sep = b_.phased && b_.phased->raw()[row * ns_ + smp] != 0 ? '|' : '/';
        }
        vcf::WriteEntry(f, first + smp * n, n, sep, &o);
        ends_.push_back(o.written());
      }
    }
    uint64_t width = 0;
    for (uint64_t smp = 0, at = 0; smp < ns_; at = ends_[smp++]) {
      const std::string_view e(text_.data() + at, ends_[smp] - at);
      if (type == bcf::kHtStr) {
        width = std::max<uint64_t>(width, e.size());
      } else {
        width = std::max<uint64_t>(width, 1 + std::count(e.begin(), e.end(), ','));
      }
    }
    if (type == bcf::kHtStr) {
      bcf::PutSize(out, static_cast<uint32_t>(width), bcf::kChar);
      for (uint64_t smp = 0, at = 0; smp < ns_; at = ends_[smp++]) {
        out->append(text_.data() + at, ends_[smp] - at);
        out->append(width - (ends_[smp] - at), '\0');
      }
      return OkStatus();
    }
    if (type == bcf::kHtInt) {
      ints_.assign(ns_ * width, bcf::kInt32VectorEnd);
    } else {
      floats_.assign(ns_ * width, 0);
      for (float& x : floats_) std::memcpy(&x, &bcf::kFloatVectorEnd, 4);
    }
    for (uint64_t smp = 0, at = 0; smp < ns_; at = ends_[smp++]) {
      const std::string_view e(text_.data() + at, ends_[smp] - at);
      size_t t = 0;
      for (uint64_t l = 0;; ++t, ++l) {  // vcf_parse_format's loop over one entry
        const char c = t < e.size() ? e[t] : '\0';
        if (type == bcf::kHtInt) {
          int32_t x = bcf::kInt32Missing;
          if (c == '.') {
            ++t;
          } else {
            size_t used;
            bool overflow;
            const int64_t v = bcf::ParseInt(e.substr(t), &used, &overflow);
            if (used > 0 && !overflow && v >= bcf::kMinInt32 && v <= INT32_MAX)
              x = static_cast<int32_t>(v);
            t += used;
          }
          ints_[smp * width + l] = x;
        } else {
          float x;
          const char next = t + 1 < e.size() ? e[t + 1] : '\0';
          if (c == '.' && !(next >= '0' && next <= '9')) {
            std::memcpy(&x, &bcf::kFloatMissing, 4);
            ++t;
          } else {
            size_t used;
            x = bcf::ParseFloat(e.substr(t), &used);
            t += used;
          }
          floats_[smp * width + l] = x;
        }
        if (t >= e.size() || e[t] != ',' || l + 1 >= width) break;
      }
    }
    if (type == bcf::kHtInt) {
      bcf::PutInts(out, ints_.data(), ints_.size(), static_cast<int64_t>(width));
    } else {
      bcf::PutSize(out, static_cast<uint32_t>(width), bcf::kFloat);
      const size_t at = out->size();
      out->resize(at + 4 * floats_.size());
      for (size_t i = 0; i < floats_.size(); ++i) {
        uint32_t u;
        std::memcpy(&u, &floats_[i], 4);
        for (int k = 0; k < 4; ++k) (*out)[at + 4 * i + k] = static_cast<char>(u >> (8 * k));
      }
    }
    return OkStatus();
  }

  const formats::vcz::Store& s_;
  const formats::vcz::VariantBlock& b_;
  const bcf::HeaderDict& dict_;
  const uint64_t ns_;
  std::vector<size_t> shown_;
  std::vector<int32_t> ints_;
  std::vector<float> floats_;
  uint64_t width_ = 1;
  std::string text_;
  std::vector<uint64_t> ends_;
};

}  // namespace

BcfSource::BcfSource(std::shared_ptr<const VcfSource> vcf, std::string name)
    : vcf_(std::move(vcf)), name_(std::move(name)) {}

std::string BcfSource::Describe() const { return name_ + " of " + vcf_->store()->Describe(); }

Result<const bcf::Header*> BcfSource::Header() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!header_) header_.emplace(bcf::ParseVcfHeader(vcf_->Header()));
  if (!header_->ok()) return header_->status();
  return &**header_;
}

Status BcfSource::RenderChunk(uint64_t k, std::string* out) const {
  return Render(k, out, nullptr);
}

Status BcfSource::RecordSpans(uint64_t k, ChunkSpans* out) const {
  std::string bytes;
  RETURN_IF_ERROR(Render(k, &bytes, out));
  out->length = bytes.size();
  if (k == 0) out->meta_end = bytes.size();
  return OkStatus();
}

bool BcfSource::SpansFromPartner(const RecordSource& partner, uint64_t k, const ChunkSpans&,
                                 ChunkSpans* out) const {
  // The VCF view's pass (of the same records, chunked alike) has just decoded chunk k's Zarr
  // chunks, kept in the cache: rendering its records here costs no second read of the store.
  const auto* vcf = dynamic_cast<const VcfSource*>(&partner);
  if (vcf == nullptr || vcf->store() != vcf_->store() || vcf->view() != vcf_->view() ||
      vcf->rows_per_chunk() != vcf_->rows_per_chunk())
    return false;
  return RecordSpans(k, out).ok();
}

Status BcfSource::Render(uint64_t k, std::string* out, ChunkSpans* spans) const {
  ASSIGN_OR_RETURN(const bcf::Header* h, Header());
  if (k == 0) {
    out->append(bcf::FileHeader(*h));
    return OkStatus();
  }
  const auto& s = *vcf_->store();
  const uint64_t r = vcf_->rows_per_chunk();
  const uint64_t v0 = (k - 1) * r, v1 = std::min(v0 + r, s.num_variants());
  if (v0 >= v1) return OkStatus();
  const bool samples = vcf_->with_samples();
  ASSIGN_OR_RETURN(formats::vcz::VariantBlock b, s.Read(v0, v1, samples, /*reverse=*/k % 2 == 0));
  std::optional<FormatEncoder> format;
  if (samples) format.emplace(s, b, h->dict);
  const uint32_t ns = samples ? static_cast<uint32_t>(s.samples().size()) : 0;
  const size_t start = out->size();
  std::string site, indiv;
  bcf::Record rec;
  for (uint64_t row = 0; row < b.count; ++row) {
    site.clear();
    {
      RawText o(&site);
      RETURN_IF_ERROR(vcf::WriteSiteColumns(s, b, row, v0 + row, &o));
    }
    if (Status st = bcf::ParseSiteColumns(site, h->dict, &rec); !st.ok()) {
      return std::move(st).WithContext("variant " + std::to_string(v0 + row));
    }
    uint32_t n_fmt = 0;
    indiv.clear();
    if (format) RETURN_IF_ERROR(format->Encode(row, v0 + row, &indiv, &n_fmt));
    bcf::PutRecord(out, rec, indiv, n_fmt, ns);
    if (spans != nullptr) {
      const std::string& contig = h->dict.contig_names[rec.rid];
      if (spans->contigs.empty() || spans->contigs.back() != contig)
        spans->contigs.push_back(contig);
      RecordSpan span;
      span.contig = static_cast<uint32_t>(spans->contigs.size() - 1);
      span.begin = rec.pos;
      span.end = rec.pos + rec.rlen;
      span.end_in_chunk = out->size() - start;
      spans->records.push_back(span);
    }
  }
  return OkStatus();
}

}  // namespace omicsfs::text
