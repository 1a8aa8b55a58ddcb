#include "text/bcf_source.h"

#include <algorithm>
#include <cstring>
#include <limits>
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

// Values of an entry the VCF view writes: up to the first fill (signed types). Without branches
// on the values for the short entries of AD-like fields (a branch per value cost more than the
// encoding).
template <typename T>
uint64_t EntryLength(const T* v, uint64_t n) {
  if constexpr (std::is_signed_v<T>) {
    if (n <= 4) {
      uint64_t l = 0, alive = 1;
      for (uint64_t i = 0; i < n; ++i) {
        alive &= v[i] != static_cast<T>(kIntFill);
        l += alive;
      }
      return l;
    }
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

// Stores encoded values of one width: a value, or the width's missing / vector-end sentinel.
template <int W>
inline void Store(char* p, int32_t x) {
  if constexpr (W == 1) {
    *p = static_cast<char>(x == bcf::kInt32Missing     ? 0x80
                           : x == bcf::kInt32VectorEnd ? 0x81
                                                       : static_cast<uint8_t>(x));
  } else if constexpr (W == 2) {
    const uint16_t v = x == bcf::kInt32Missing     ? 0x8000
                       : x == bcf::kInt32VectorEnd ? 0x8001
                                                   : static_cast<uint16_t>(x);
    std::memcpy(p, &v, 2);  // little-endian hosts only (as the project's other writers)
  } else {
    std::memcpy(p, &x, 4);
  }
}

// The smallest and largest of n single values that are neither missing nor fill (values BCF
// cannot hold count as missing: AsBcfInt), in T's own width where it is narrow (vectorised).
template <typename T>
void NarrowRange(const T* v, uint64_t n, int64_t* lo, int64_t* hi) {
  if constexpr (std::is_signed_v<T> && sizeof(T) <= 2) {
    T l = std::numeric_limits<T>::max(), h = std::numeric_limits<T>::min();
    bool any = false;
    for (uint64_t i = 0; i < n; ++i) {
      const T x = v[i];
      const bool none = x == static_cast<T>(kIntMissing) || x == static_cast<T>(kIntFill);
      any |= !none;
      l = std::min(l, none ? std::numeric_limits<T>::max() : x);
      h = std::max(h, none ? std::numeric_limits<T>::min() : x);
    }
    if (any) *lo = l, *hi = h;
  } else {
    for (uint64_t i = 0; i < n; ++i) {
      const int32_t x = AsBcfInt(v[i]);
      if (x == bcf::kInt32Missing || (std::is_signed_v<T> && v[i] == static_cast<T>(kIntFill)))
        continue;
      *lo = std::min<int64_t>(*lo, x);
      *hi = std::max<int64_t>(*hi, x);
    }
  }
}

// The width PutInts chooses for values in [lo, hi] (lo > hi: none but sentinels).
inline int WidthOf(int64_t lo, int64_t hi) {
  if (hi <= INT8_MAX && lo >= bcf::kMinInt8) return 1;
  if (hi <= INT16_MAX && lo >= bcf::kMinInt16) return 2;
  return 4;
}

inline bcf::Type TypeOfWidth(int w) {
  return w == 1 ? bcf::kInt8 : w == 2 ? bcf::kInt16 : bcf::kInt32;
}

// The FORMAT part of records being encoded, its scratch reused from record to record. Genotypes
// and integer fields are written straight from the Zarr values in the width bcf_enc_vint picks
// (one pass for the width, one to write); with `measure`, only counted.
class FormatEncoder {
 public:
  FormatEncoder(const formats::vcz::Store& s, const formats::vcz::VariantBlock& b,
                const bcf::HeaderDict& dict)
      : s_(s), b_(b), dict_(dict), ns_(s.samples().size()) {}

  // Row `row`'s FORMAT fields appended to *out; *n_fmt of them. With `measured`, the values of
  // genotype and integer fields are not written but their length added to *measured.
  Status Encode(uint64_t row, uint64_t variant, std::string* out, uint32_t* n_fmt,
                uint64_t* measured) {
    *n_fmt = 0;
    bool gt = false;
    vcf::ShownFields(b_, row, &gt, &shown_);
    if (gt) {
      RETURN_IF_ERROR(Field("GT", *b_.genotype, row, variant, true, out, measured));
      ++*n_fmt;
    }
    for (size_t j : shown_) {
      RETURN_IF_ERROR(Field(s_.format()[j].key, b_.format[j], row, variant, false, out, measured));
      ++*n_fmt;
    }
    return OkStatus();
  }

 private:
  Status Field(const std::string& key, const DenseBlock& f, uint64_t row, uint64_t variant,
               bool genotype, std::string* out, uint64_t* measured) {
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
      return WithInts(
          f, [&](auto* v) { return Genotypes(v + first, n, row, variant, out, measured); });
    }
    if (!genotype && type == bcf::kHtInt && IsInts(f.dtype)) {
      WithInts(f, [&](auto* v) { return Integers(v + first, n, out, measured); });
      return OkStatus();
    }
    return FromText(key, f, first, n, row, type, genotype, variant, out);
  }

  // The descriptor of ns entries of w values of width `width`, and room for the values (nullptr
  // when measuring).
  char* Values(uint64_t w, int width, std::string* out, uint64_t* measured) {
    bcf::PutSize(out, static_cast<uint32_t>(ns_ * w == 1 ? 1 : w), TypeOfWidth(width));
    const uint64_t bytes = ns_ * w * width;
    if (measured != nullptr) {
      *measured += bytes;
      return nullptr;
    }
    const size_t at = out->size();
    out->resize(at + bytes);
    return out->data() + at;
  }

  // GT: (allele + 1) << 1 | phased (an allele after the first is phased when its separator is
  // '|'), '.' as 0 | phased, entries padded with vector-end to the longest.
  template <typename T>
  Status Genotypes(const T* v, uint64_t n, uint64_t row, uint64_t variant, std::string* out,
                   uint64_t* measured) {
    uint64_t w = 1;
    int64_t top = -1;                     // the largest allele
    int64_t low = 0;                      // the smallest value
    if (n == 2 && std::is_signed_v<T>) {  // diploid: one flat pass (checked below when odd)
      T t = -1, m = 0;
      bool half = false;
      for (uint64_t i = 0; i < 2 * ns_; i += 2) {
        const T a = v[i], b = v[i + 1];
        t = std::max(t, std::max(a, b));
        m = std::min(m, std::min(a, static_cast<T>(b == static_cast<T>(kIntFill) ? 0 : b)));
        half |= b == static_cast<T>(kIntFill);
      }
      top = t;
      low = m;
      w = half ? 1 : 2;
      if (half) {  // some haploid calls: the longest entry decides
        for (uint64_t i = 0; i < 2 * ns_ && w < 2; i += 2)
          w = v[i + 1] == static_cast<T>(kIntFill) ? 1 : 2;
      }
    }
    if (n != 2 || !std::is_signed_v<T> || low < kIntMissing) {
      w = 1;
      top = -1;
      for (uint64_t smp = 0; smp < ns_; ++smp) {
        const T* e = v + smp * n;
        const uint64_t l = EntryLength(e, n);
        if (l == 0) {
          return CorruptError("variant " + std::to_string(variant) + ", sample " +
                              std::to_string(smp) + ": GT holds no value (bcftools reads no GT)");
        }
        w = std::max(w, l);
        for (uint64_t i = 0; i < l; ++i) {
          const auto a = static_cast<int64_t>(e[i]);
          top = std::max(top, a);
          if (a < kIntMissing) {
            return CorruptError("variant " + std::to_string(variant) + ", sample " +
                                std::to_string(smp) + ": allele " + std::to_string(a) +
                                " bcftools cannot read");
          }
        }
      }
    }
    if (top >= (INT32_MAX >> 1) - 1) {
      return CorruptError("variant " + std::to_string(variant) + ": allele " + std::to_string(top) +
                          " bcftools cannot read");
    }
    const int width = WidthOf(0, ((top + 1) << 1) | 1);
    char* p = Values(w, width, out, measured);
    if (p == nullptr) return OkStatus();
    const uint8_t* phased =
        b_.phased ? reinterpret_cast<const uint8_t*>(b_.phased->raw()) + row * ns_ : nullptr;
    auto write = [&]<int W>() {
      if (n == 2 && w == 2) {  // diploid: two values each, the second a fill where haploid
        for (uint64_t smp = 0; smp < ns_; ++smp, p += 2 * W) {
          const T a = v[2 * smp], b = v[2 * smp + 1];
          const int32_t ph = phased != nullptr && phased[smp] != 0 ? 1 : 0;
          const int32_t x0 =
              a == static_cast<T>(kIntMissing) ? 0 : static_cast<int32_t>(a + 1) << 1;
          const int32_t x1 = b == static_cast<T>(kIntFill) ? bcf::kInt32VectorEnd
                             : b == static_cast<T>(kIntMissing)
                                 ? ph
                                 : (static_cast<int32_t>(b + 1) << 1) | ph;
          Store<W>(p, x0);
          Store<W>(p + W, x1);
        }
        return;
      }
      for (uint64_t smp = 0; smp < ns_; ++smp) {
        const T* e = v + smp * n;
        const uint64_t l = EntryLength(e, n);
        const int32_t phase = phased != nullptr && phased[smp] != 0 ? 1 : 0;
        for (uint64_t i = 0; i < w; ++i, p += W) {
          int32_t x = bcf::kInt32VectorEnd;
          if (i < l) {
            const int32_t ph = i > 0 ? phase : 0;
            x = e[i] == static_cast<T>(kIntMissing) ? ph
                                                    : static_cast<int32_t>((e[i] + 1) << 1) | ph;
          }
          Store<W>(p, x);
        }
      }
    };
    if (width == 1) {
      write.template operator()<1>();
    } else if (width == 2) {
      write.template operator()<2>();
    } else {
      write.template operator()<4>();
    }
    return OkStatus();
  }

  // An integer field: values up to the entry's first fill, '.' missing, values BCF cannot hold
  // missing, an empty entry one missing value; padded with vector-end to the longest entry.
  template <typename T>
  int Integers(const T* v, uint64_t n, std::string* out, uint64_t* measured) {
    switch (n) {  // the short entries of AD-like fields unrolled: a loop per entry cost most
      case 2:
        return IntegersOf<T, 2>(v, out, measured);
      case 3:
        return IntegersOf<T, 3>(v, out, measured);
      case 4:
        return IntegersOf<T, 4>(v, out, measured);
      default:
        break;
    }
    uint64_t w = 1;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    if (n == 1) {  // DP, GQ: one flat loop
      NarrowRange(v, ns_, &lo, &hi);
    } else {
      for (uint64_t smp = 0; smp < ns_; ++smp) {
        const T* e = v + smp * n;
        const uint64_t l = EntryLength(e, n);
        w = std::max(w, l);
        for (uint64_t i = 0; i < l; ++i) {
          const int32_t x = AsBcfInt(e[i]);
          if (x == bcf::kInt32Missing) continue;
          lo = std::min<int64_t>(lo, x);
          hi = std::max<int64_t>(hi, x);
        }
      }
    }
    const int width = WidthOf(lo, hi);
    char* p = Values(w, width, out, measured);
    if (p == nullptr) return 0;
    auto write = [&]<int W>() {
      if (n == 1) {  // one value each: missing where the store has none
        for (uint64_t smp = 0; smp < ns_; ++smp, p += W) {
          const T x = v[smp];
          const bool none = std::is_signed_v<T> &&
                            (x == static_cast<T>(kIntMissing) || x == static_cast<T>(kIntFill));
          Store<W>(p, none ? bcf::kInt32Missing : AsBcfInt(x));
        }
        return;
      }
      for (uint64_t smp = 0; smp < ns_; ++smp) {
        const T* e = v + smp * n;
        const uint64_t l = EntryLength(e, n);
        for (uint64_t i = 0; i < w; ++i, p += W) {
          Store<W>(p, i < l ? AsBcfInt(e[i]) : i == 0 ? bcf::kInt32Missing : bcf::kInt32VectorEnd);
        }
      }
    };
    if (width == 1) {
      write.template operator()<1>();
    } else if (width == 2) {
      write.template operator()<2>();
    } else {
      write.template operator()<4>();
    }
    return 0;
  }

  // Integers with N values per sample, the entry's length and each value's fate (value, missing,
  // vector-end) decided without branches.
  template <typename T, int N>
  int IntegersOf(const T* v, std::string* out, uint64_t* measured) {
    // The range in T's own width where it is narrow (vectorised), else in 64 bits.
    using R = std::conditional_t<std::is_signed_v<T> && sizeof(T) <= 2, T, int64_t>;
    R lo = std::numeric_limits<R>::max(), hi = std::numeric_limits<R>::min();
    uint64_t w = 1;
    bool any = false;
    for (uint64_t smp = 0; smp < ns_; ++smp) {
      const T* e = v + smp * N;
      uint64_t l = 0, alive = 1;
      for (int i = 0; i < N; ++i) {
        alive &= !std::is_signed_v<T> || e[i] != static_cast<T>(kIntFill);
        l += alive;
        const int32_t x = AsBcfInt(e[i]);
        const bool value = alive && x != bcf::kInt32Missing;
        any |= value;
        lo = std::min<R>(lo, value ? static_cast<R>(x) : std::numeric_limits<R>::max());
        hi = std::max<R>(hi, value ? static_cast<R>(x) : std::numeric_limits<R>::min());
      }
      w = std::max(w, l);
    }
    const int width = any ? WidthOf(lo, hi) : 1;
    char* p = Values(w, width, out, measured);
    if (p == nullptr) return 0;
    // Each entry's w values: the value while the entry lasts, then missing (an empty entry's
    // first) or vector-end. w and the width fixed at compile time: the loops unroll.
    auto write = [&]<int W, int K>() {
      for (uint64_t smp = 0; smp < ns_; ++smp, p += K * W) {
        const T* e = v + smp * N;
        bool alive = true;
        for (int i = 0; i < K; ++i) {
          alive = alive && (!std::is_signed_v<T> || e[i] != static_cast<T>(kIntFill));
          Store<W>(p + i * W, alive    ? AsBcfInt(e[i])
                              : i == 0 ? bcf::kInt32Missing
                                       : bcf::kInt32VectorEnd);
        }
      }
    };
    auto by_width = [&]<int K>() {
      if (width == 1) {
        write.template operator()<1, K>();
      } else if (width == 2) {
        write.template operator()<2, K>();
      } else {
        write.template operator()<4, K>();
      }
    };
    if (w == 1) {
      by_width.template operator()<1>();
    } else if (w == 2) {
      by_width.template operator()<2>();
    } else if (w == 3 && N >= 3) {
      by_width.template operator()<(N >= 3 ? 3 : 1)>();
    } else {
      by_width.template operator()<N>();
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
  return Render(k, out, nullptr, nullptr);
}

Status BcfSource::RecordSpans(uint64_t k, ChunkSpans* out) const {
  std::string bytes;
  uint64_t measured = 0;
  RETURN_IF_ERROR(Render(k, &bytes, out, &measured));
  out->length = bytes.size() + measured;
  if (k == 0) out->meta_end = out->length;
  return OkStatus();
}

bool BcfSource::SpansFromPartner(const RecordSource& partner, uint64_t k, const ChunkSpans&,
                                 ChunkSpans* out) const {
  // The VCF view's pass (of the same records, chunked alike) has just decoded chunk k's Zarr
  // chunks, kept in the cache: measuring its records here costs no second read of the store.
  const auto* vcf = dynamic_cast<const VcfSource*>(&partner);
  if (vcf == nullptr || vcf->store() != vcf_->store() || vcf->view() != vcf_->view() ||
      vcf->rows_per_chunk() != vcf_->rows_per_chunk())
    return false;
  return RecordSpans(k, out).ok();
}

Status BcfSource::Render(uint64_t k, std::string* out, ChunkSpans* spans,
                         uint64_t* measured) const {
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
  uint64_t unwritten = 0;  // measured, not written
  std::string site;
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
    // The FORMAT part goes straight after the shared part; its length and count are then set in
    // the record's first bytes.
    const size_t at = out->size();
    bcf::PutRecord(out, rec, "", 0, ns);
    const size_t indiv_at = out->size();
    const uint64_t before = unwritten;
    uint32_t n_fmt = 0;
    if (format) {
      RETURN_IF_ERROR(format->Encode(row, v0 + row, out, &n_fmt, measured ? &unwritten : nullptr));
    }
    const auto indiv = static_cast<uint32_t>(out->size() - indiv_at + (unwritten - before));
    const uint32_t fmt_sample = n_fmt << 24 | (ns & 0xffffff);
    std::memcpy(out->data() + at + 4, &indiv, 4);  // little-endian, as PutU32 writes
    std::memcpy(out->data() + at + 28, &fmt_sample, 4);
    if (spans != nullptr) {
      const std::string& contig = h->dict.contig_names[rec.rid];
      if (spans->contigs.empty() || spans->contigs.back() != contig)
        spans->contigs.push_back(contig);
      RecordSpan span;
      span.contig = static_cast<uint32_t>(spans->contigs.size() - 1);
      span.begin = rec.pos;
      span.end = rec.pos + rec.rlen;
      span.end_in_chunk = out->size() - start + unwritten;
      spans->records.push_back(span);
    }
  }
  if (measured != nullptr) *measured += unwritten;
  return OkStatus();
}

}  // namespace omicsfs::text
