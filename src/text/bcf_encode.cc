#include "text/bcf_encode.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "util/bytes.h"

namespace omicsfs::text::bcf {
namespace {

void PutI16(std::string* out, int16_t v) {
  const auto u = static_cast<uint16_t>(v);
  out->push_back(static_cast<char>(u & 0xff));
  out->push_back(static_cast<char>(u >> 8));
}

bool IsSentinel(int32_t x) { return x == kInt32Missing || x == kInt32VectorEnd; }

}  // namespace

void PutSize(std::string* out, uint32_t size, Type type) {
  if (size < 15) {
    out->push_back(static_cast<char>(size << 4 | type));
    return;
  }
  out->push_back(static_cast<char>(15 << 4 | type));
  if (size < 128) {
    out->push_back(static_cast<char>(1 << 4 | kInt8));
    out->push_back(static_cast<char>(size));
  } else if (size < 32768) {
    out->push_back(static_cast<char>(1 << 4 | kInt16));
    PutI16(out, static_cast<int16_t>(size));
  } else {
    out->push_back(static_cast<char>(1 << 4 | kInt32));
    PutU32(out, size);
  }
}

void PutInt1(std::string* out, int32_t x) { PutInts(out, &x, 1, 1); }

Type IntWidth(const int32_t* a, size_t n) {
  int32_t max = INT32_MIN, min = INT32_MAX;
  for (size_t i = 0; i < n; ++i) {
    const int32_t x = a[i];
    if (IsSentinel(x)) continue;
    max = std::max(max, x);
    min = std::min(min, x);
  }
  // With no value but sentinels, max < min: the narrowest width (htslib's comparisons agree).
  if (max <= INT8_MAX && min >= kMinInt8) return kInt8;
  if (max <= INT16_MAX && min >= kMinInt16) return kInt16;
  return kInt32;
}

void PutIntsAs(std::string* out, const int32_t* a, size_t n, Type width) {
  const size_t at = out->size();
  if (width == kInt8) {
    out->resize(at + n);
    char* p = out->data() + at;
    for (size_t i = 0; i < n; ++i) {
      const int32_t x = a[i];
      p[i] = static_cast<char>(x == kInt32Missing     ? 0x80
                               : x == kInt32VectorEnd ? 0x81
                                                      : static_cast<uint8_t>(x));
    }
  } else if (width == kInt16) {
    out->resize(at + 2 * n);
    char* p = out->data() + at;
    for (size_t i = 0; i < n; ++i) {
      const int32_t x = a[i];
      const uint16_t v = x == kInt32Missing     ? 0x8000
                         : x == kInt32VectorEnd ? 0x8001
                                                : static_cast<uint16_t>(x);
      p[2 * i] = static_cast<char>(v & 0xff);
      p[2 * i + 1] = static_cast<char>(v >> 8);
    }
  } else {
    out->resize(at + 4 * n);
    char* p = out->data() + at;
    for (size_t i = 0; i < n; ++i) {
      const auto v = static_cast<uint32_t>(a[i]);
      for (int b = 0; b < 4; ++b) p[4 * i + b] = static_cast<char>(v >> (8 * b));
    }
  }
}

void PutInts(std::string* out, const int32_t* a, size_t n, int64_t wsize) {
  if (n == 0) {
    PutSize(out, 0, kNull);
    return;
  }
  // bcf_enc_int1 for one value: the same bytes as the vector rule (its width by the value alone).
  const Type width = IntWidth(a, n);
  PutSize(out,
          static_cast<uint32_t>(n == 1       ? 1
                                : wsize <= 0 ? static_cast<int64_t>(n)
                                             : wsize),
          width);
  PutIntsAs(out, a, n, width);
}

void PutFloats(std::string* out, const float* a, size_t n) {
  PutSize(out, static_cast<uint32_t>(n), kFloat);
  const size_t at = out->size();
  out->resize(at + 4 * n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t v;
    std::memcpy(&v, &a[i], 4);
    for (int b = 0; b < 4; ++b) (*out)[at + 4 * i + b] = static_cast<char>(v >> (8 * b));
  }
}

void PutChars(std::string* out, std::string_view s) {
  PutSize(out, static_cast<uint32_t>(s.size()), kChar);
  out->append(s);
}

float ParseFloat(std::string_view s, size_t* used) {
  // strtod's grammar for what a VCF holds: [-+]digits[.digits][e[-+]digits], inf, nan. Leading
  // spaces are skipped by strtod; the views write none. from_chars is strtod without locale.
  size_t at = 0;
  bool plus = false;
  if (at < s.size() && s[at] == '+') {
    plus = true;
    ++at;
  }
  double d = 0;
  auto r = std::from_chars(s.data() + at, s.data() + s.size(), d);
  if (r.ec == std::errc::invalid_argument || (plus && at < s.size() && s[at] == '-')) {
    *used = 0;
    return 0;
  }
  *used = static_cast<size_t>(r.ptr - s.data());
  if (r.ec == std::errc::result_out_of_range) {
    // strtod: ±HUGE_VAL on overflow, a value near zero on underflow (its sign kept).
    const bool neg = s.size() > at && s[at] == '-';
    size_t exp = std::string_view(s.data(), *used).find_first_of("eE");
    const bool big = exp == std::string_view::npos || s[exp + 1] != '-';
    d = big ? (neg ? -HUGE_VAL : HUGE_VAL) : (neg ? -0.0 : 0.0);
  }
  return static_cast<float>(d);
}

int64_t ParseInt(std::string_view s, size_t* used, bool* overflow) {
  size_t at = 0;
  int64_t sign = 1;
  uint64_t limit = (uint64_t{1} << 63) - 1;
  if (at < s.size() && (s[at] == '-' || s[at] == '+')) {
    if (s[at] == '-') {
      sign = -1;
      ++limit;
    }
    ++at;
  }
  uint64_t n = 0;
  *overflow = false;
  while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
    const uint64_t d = static_cast<uint64_t>(s[at] - '0');
    if (n > (limit - d) / 10) {
      *overflow = true;
      n = limit;
      while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
      break;
    }
    n = n * 10 + d;
    ++at;
  }
  *used = at;  // a sign alone counts as read (hts_str2int's end moves past it)
  return sign < 0 ? static_cast<int64_t>(0 - n) : static_cast<int64_t>(n);
}

namespace {

// bcf_hrec_t: a generic line (key, value) or a structured one (key, keys and values).
struct Hrec {
  std::string key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::string>> kv;
  const std::string* Find(std::string_view k) const {
    for (const auto& [kk, v] : kv) {
      if (kk == k) return &v;
    }
    return nullptr;
  }
};

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(char c) { return IsAlpha(c) || (c >= '0' && c <= '9'); }

bool Escaped(std::string_view line, size_t min, size_t at) {
  int n = 0;
  while (at > min && line[at - 1] == '\\') --at, ++n;
  return n % 2 == 1;
}

// bcf_hdr_parse_line on one line (no newline): nullopt when it is not a "##key=" line or is
// malformed (htslib skips it).
std::optional<Hrec> ParseLine(std::string_view line) {
  if (line.size() < 2 || line[0] != '#' || line[1] != '#') return std::nullopt;
  size_t p = 2, q = 2;
  while (q < line.size() && line[q] != '=') ++q;
  if (q >= line.size() || q == p) return std::nullopt;
  Hrec h;
  h.key = std::string(line.substr(p, q - p));
  p = ++q;
  if (p >= line.size() || line[p] != '<') {
    h.value = std::string(line.substr(p));
    return h;
  }
  int nopen = 1;
  auto at = [&](size_t i) { return i < line.size() ? line[i] : '\0'; };
  while (q < line.size() && nopen > 0) {
    p = ++q;
    while (at(q) == ' ') ++p, ++q;
    if (p == q && (IsAlpha(at(q)) || at(q) == '_')) {
      ++q;
      while (IsAlnum(at(q)) || at(q) == '_' || at(q) == '.') ++q;
    }
    const size_t n = q - p;
    size_t m = 0;
    while (at(q) == ' ') ++q, ++m;
    if (at(q) != '=' || n == 0) return std::nullopt;
    std::string key(line.substr(p, q - p - m));
    p = ++q;
    while (at(q) == ' ') ++p, ++q;
    bool quoted = false;
    char ending = '\0';
    if (at(p) == '"') {
      quoted = true;
      ending = '"';
      ++p;
    } else if (at(p) == '[') {
      quoted = true;
      ending = ']';
    }
    if (quoted) ++q;
    while (q < line.size()) {
      if (quoted) {
        if (line[q] == ending && !Escaped(line, p, q)) break;
      } else {
        if (line[q] == '<') ++nopen;
        if (line[q] == '>') --nopen;
        if (nopen == 0) break;
        if (line[q] == ',' && nopen == 1) break;
      }
      ++q;
    }
    size_t r = q;
    if (quoted && ending == ']') {
      if (at(q) != ending) return std::nullopt;  // htslib fails the header here
      ++r;
      ++q;
      quoted = false;
    }
    while (r > p && line[r - 1] == ' ') --r;
    std::string val(line.substr(p, r - p));
    if (quoted) val = "\"" + val + "\"";
    h.kv.emplace_back(std::move(key), std::move(val));
    if (quoted && at(q) == ending) ++q;
    if (at(q) == '>') {
      if (nopen) --nopen;
      ++q;
    }
  }
  return h;
}

enum HlType { kHlFlt = 0, kHlInfo = 1, kHlFmt = 2, kHlCtg = 3, kHlStr = 4, kHlGen = 5 };

HlType TypeOf(const Hrec& h) {
  if (h.value) return kHlGen;
  if (h.key == "contig") return kHlCtg;
  if (h.key == "INFO") return kHlInfo;
  if (h.key == "FILTER") return kHlFlt;
  if (h.key == "FORMAT") return kHlFmt;
  return h.kv.empty() ? kHlGen : kHlStr;
}

// A line's IDX= value into *idx (nullopt when it has none); false when it is not a number
// (htslib skips the line).
bool Idx(const Hrec& h, std::optional<int32_t>* idx) {
  const std::string* v = h.Find("IDX");
  if (v == nullptr) return true;
  char* end = nullptr;
  const long x = std::strtol(v->c_str(), &end, 10);
  if (*end != '\0' || x < 0 || x >= INT32_MAX - 1) return false;
  *idx = static_cast<int32_t>(x);
  return true;
}

class HeaderBuilder {
 public:
  // bcf_hdr_add_hrec: false when the line is not kept.
  Status Add(Hrec h) {
    const HlType type = TypeOf(h);
    if (type == kHlGen) {
      for (const Hrec& o : kept_) {
        if (TypeOf(o) != kHlGen || o.key != h.key) continue;
        if (h.key == "fileformat" || o.value == h.value) return OkStatus();
      }
    } else if (type == kHlCtg) {
      int64_t len = 0;
      if (const std::string* l = h.Find("length")) {
        const char* b = l->c_str();
        char* e = nullptr;
        len = std::strtoll(b, &e, 10);
        if (e == b || len < 0) return OkStatus();
      }
      const std::string* id = h.Find("ID");
      if (id == nullptr || out_.contigs.count(*id)) return OkStatus();
      // A line's own IDX= (a BCF's header read back) is kept, as htslib keeps it.
      std::optional<int32_t> given;
      if (!Idx(h, &given)) return OkStatus();
      const int32_t rid = given ? *given : static_cast<int32_t>(out_.contig_names.size());
      if (out_.contig_names.size() <= static_cast<size_t>(rid)) {
        out_.contig_names.resize(rid + 1);
        out_.contig_lengths.resize(rid + 1);
      }
      out_.contigs.emplace(*id, rid);
      out_.contig_names[rid] = *id;
      out_.contig_lengths[rid] = len;
      if (!given) h.kv.emplace_back("IDX", std::to_string(rid));
    } else if (type == kHlInfo || type == kHlFlt || type == kHlFmt) {
      const std::string* id = h.Find("ID");
      std::optional<int32_t> given;
      if (!Idx(h, &given)) return OkStatus();
      int vtype = kHtStr;  // Type missing or unknown: String
      if (const std::string* t = h.Find("Type")) {
        if (*t == "Integer") vtype = kHtInt;
        if (*t == "Float") vtype = kHtReal;
        if (*t == "Flag") vtype = kHtFlag;
      }
      if (id == nullptr) return OkStatus();
      auto [it, added] = out_.ids.try_emplace(*id);
      HeaderDict::Id& e = it->second;
      if (added) {
        e.idx = given ? *given : next_id_;
        next_id_ = std::max(next_id_, e.idx + 1);
      } else if ((type == kHlInfo && e.info_type >= 0) || (type == kHlFmt && e.format_type >= 0) ||
                 (type == kHlFlt && e.filter)) {
        return OkStatus();  // already defined
      }
      if (type == kHlInfo) e.info_type = vtype;
      if (type == kHlFmt) e.format_type = vtype;
      if (type == kHlFlt) e.filter = true;
      if (!given) h.kv.emplace_back("IDX", std::to_string(e.idx));
    }
    kept_.push_back(std::move(h));
    return OkStatus();
  }

  Result<Header> Finish(std::string_view chrom_line) {
    std::string& t = header_.text;
    for (const Hrec& h : kept_) {
      t += "##" + h.key + "=";
      if (h.value) {
        t += *h.value;
      } else {
        t += '<';
        for (size_t i = 0; i < h.kv.size(); ++i) {
          if (i > 0) t += ',';
          t += h.kv[i].first + "=" + h.kv[i].second;
        }
        t += '>';
      }
      t += '\n';
    }
    t += "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO";
    // bcf_hdr_parse_sample_line: the columns after FORMAT are the samples.
    size_t col = 0, at = 0;
    std::vector<std::string_view> samples;
    while (at <= chrom_line.size()) {
      size_t tab = chrom_line.find('\t', at);
      if (tab == std::string_view::npos) tab = chrom_line.size();
      if (col >= 9) samples.push_back(chrom_line.substr(at, tab - at));
      ++col;
      at = tab + 1;
    }
    if (!samples.empty()) {
      t += "\tFORMAT";
      for (auto s : samples) {
        t += '\t';
        t += s;
      }
    }
    t += '\n';
    out_.samples = static_cast<uint32_t>(samples.size());
    header_.dict = std::move(out_);
    return std::move(header_);
  }

 private:
  std::vector<Hrec> kept_;
  HeaderDict out_;
  Header header_;
  int32_t next_id_ = 0;
};

}  // namespace

Result<Header> ParseVcfHeader(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  HeaderBuilder b;
  // bcf_hdr_parse: the first line (##fileformat), then PASS, then every line again (the first is
  // a duplicate then), up to #CHROM.
  if (!lines.empty()) {
    if (auto h = ParseLine(lines[0])) RETURN_IF_ERROR(b.Add(std::move(*h)));
  }
  RETURN_IF_ERROR(b.Add(*ParseLine("##FILTER=<ID=PASS,Description=\"All filters passed\">")));
  for (std::string_view line : lines) {
    if (line.starts_with("#CHROM\t") || line.starts_with("#CHROM ")) return b.Finish(line);
    if (auto h = ParseLine(line)) RETURN_IF_ERROR(b.Add(std::move(*h)));
  }
  return CorruptError("VCF header without a #CHROM line");
}

std::string FileHeader(const Header& h) {
  std::string out("BCF\2\2", 5);
  PutU32(&out, static_cast<uint32_t>(h.text.size() + 1));
  out += h.text;
  out.push_back('\0');
  return out;
}

namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t at = 0;
  for (;;) {
    size_t e = s.find(sep, at);
    if (e == std::string_view::npos) {
      out.push_back(s.substr(at));
      return out;
    }
    out.push_back(s.substr(at, e - at));
    at = e + 1;
  }
}

// An INFO integer value (up to ',' or the end) as vcf_parse_info reads it.
int32_t InfoInt(std::string_view v) {
  size_t used;
  bool overflow;
  const int64_t x = ParseInt(v, &used, &overflow);
  if (used == 0) return kInt32Missing;
  if (overflow || x < kMinInt32 || x > INT32_MAX) return kInt32Missing;
  return static_cast<int32_t>(x);
}

Status ParseInfo(std::string_view info, const HeaderDict& dict, Record* r) {
  if (!info.empty() && info.back() == ';') info.remove_suffix(1);
  size_t key = 0;
  std::vector<int32_t> ints;
  std::vector<float> floats;
  for (size_t i = 0;; ++i) {
    const char c0 = i < info.size() ? info[i] : '\0';
    if (c0 != ';' && c0 != '=' && c0 != '\0') continue;
    std::string_view k = info.substr(key, i - key);
    std::optional<std::string_view> val;
    size_t end = i;
    if (c0 == '=') {
      end = info.find(';', i + 1);
      if (end == std::string_view::npos) end = info.size();
      val = info.substr(i + 1, end - i - 1);
    }
    const bool last = end >= info.size();
    if (!k.empty()) {
      auto it = dict.ids.find(std::string(k));
      if (it == dict.ids.end() || it->second.info_type < 0) {
        return CorruptError("INFO/" + std::string(k) +
                            " is not defined in the header: bcftools writes no BCF of it");
      }
      const int type = it->second.info_type;
      ++r->n_info;
      PutInt1(&r->shared, it->second.idx);
      if (!val) {
        PutSize(&r->shared, 0, kNull);
      } else if (type == kHtFlag || type == kHtStr) {
        PutChars(&r->shared, *val);
      } else {
        const std::vector<std::string_view> parts = Split(*val, ',');
        if (type == kHtInt) {
          ints.clear();
          for (auto p : parts) ints.push_back(InfoInt(p));
          PutInts(&r->shared, ints.data(), ints.size());
          if (ints.size() == 1 && ints[0] != kInt32Missing && k == "END" && ints[0] > r->pos) {
            r->rlen = ints[0] - r->pos;
          }
        } else {
          floats.clear();
          for (auto p : parts) {
            size_t used;
            float f = ParseFloat(p, &used);
            if (used == 0) std::memcpy(&f, &kFloatMissing, 4);
            floats.push_back(f);
          }
          PutFloats(&r->shared, floats.data(), floats.size());
        }
      }
    }
    if (last) break;
    i = end;
    key = end + 1;
  }
  return OkStatus();
}

}  // namespace

Status ParseSiteColumns(std::string_view line, const HeaderDict& dict, Record* r) {
  const std::vector<std::string_view> col = Split(line, '\t');
  if (col.size() < 8) return InternalError("a VCF line with fewer than 8 columns");
  r->shared.clear();
  r->n_info = 0;
  const auto ctg = dict.contigs.find(std::string(col[0]));
  if (ctg == dict.contigs.end()) {
    return CorruptError("contig " + std::string(col[0]) +
                        " is not defined in the header: bcftools writes no BCF of it");
  }
  r->rid = ctg->second;
  size_t used;
  bool overflow;
  int64_t pos = ParseInt(col[1], &used, &overflow);
  r->pos = pos - 1;
  if (r->pos >= INT32_MAX || overflow) {
    return UnsupportedError("position " + std::string(col[1]) + " is beyond what BCF holds");
  }
  if (col[2] != ".")
    PutChars(&r->shared, col[2]);
  else
    PutSize(&r->shared, 0, kChar);
  PutChars(&r->shared, col[3]);
  r->n_allele = 1;
  r->rlen = static_cast<int64_t>(col[3].size());
  if (col[4] != ".") {
    for (auto a : Split(col[4], ',')) {
      PutChars(&r->shared, a);
      ++r->n_allele;
    }
  }
  if (col[5] != ".") {
    float q = ParseFloat(col[5], &used);  // atof: 0 when nothing is read
    std::memcpy(&r->qual_bits, &q, 4);
  } else {
    r->qual_bits = kFloatMissing;
  }
  if (col[6] != ".") {
    std::string_view f = col[6];
    if (!f.empty() && f.back() == ';') f.remove_suffix(1);
    std::vector<int32_t> ids;
    for (auto name : Split(f, ';')) {
      auto it = dict.ids.find(std::string(name));
      if (it == dict.ids.end() || !it->second.filter) {
        return CorruptError("FILTER " + std::string(name) +
                            " is not defined in the header: bcftools writes no BCF of it");
      }
      ids.push_back(it->second.idx);
    }
    PutInts(&r->shared, ids.data(), ids.size());
  } else {
    PutSize(&r->shared, 0, kNull);
  }
  if (col[7] != ".") RETURN_IF_ERROR(ParseInfo(col[7], dict, r));
  return OkStatus();
}

void PutRecord(std::string* out, const Record& r, std::string_view indiv, uint32_t n_fmt,
               uint32_t n_sample) {
  PutU32(out, static_cast<uint32_t>(r.shared.size() + 24));
  PutU32(out, static_cast<uint32_t>(indiv.size()));
  PutU32(out, static_cast<uint32_t>(r.rid));
  PutU32(out, static_cast<uint32_t>(r.pos));
  PutU32(out, static_cast<uint32_t>(r.rlen));
  PutU32(out, r.qual_bits);
  const uint32_t info_allele = (r.n_info & 0xffff) | (r.n_allele << 16);
  PutU32(out, info_allele);
  PutU32(out, n_fmt << 24 | (n_sample & 0xffffff));
  out->append(r.shared);
  out->append(indiv);
}

}  // namespace omicsfs::text::bcf
