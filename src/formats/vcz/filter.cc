#include "formats/vcz/filter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "formats/vcz/values.h"
#include "util/log.h"
#include "util/parallel.h"

namespace omicsfs::formats::vcz {
namespace {

constexpr int kSnp = 1, kMnp = 2, kIndel = 4, kOther = 8, kBnd = 16, kOverlap = 32;

std::vector<std::string> SplitComma(std::string_view v) {
  std::vector<std::string> out;
  for (size_t from = 0; from <= v.size();) {
    size_t comma = v.find(',', from);
    if (comma == std::string_view::npos) comma = v.size();
    out.emplace_back(v.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

const Field* FindInfo(const Store& s, std::string_view key, size_t* index) {
  for (size_t i = 0; i < s.info().size(); ++i) {
    if (s.info()[i].key == key) {
      *index = i;
      return &s.info()[i];
    }
  }
  return nullptr;
}

char Upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

// htslib 1.16 bcf_set_variant_type, over NUL-terminated strings.
int TypeOf(const char* ref, const char* alt) {
  if (*alt == '*' && !alt[1]) return kOverlap;
  if (*ref && !ref[1] && *alt && !alt[1]) {
    if (*alt == '.' || *ref == *alt) return 0;
    if (*alt == 'X') return 0;
    return kSnp;
  }
  if (alt[0] == '<') {
    if (alt[1] == 'X' && alt[2] == '>') return 0;
    if (alt[1] == '*' && alt[2] == '>') return 0;
    if (!std::strcmp("NON_REF>", alt + 1)) return 0;
    return kOther;
  }
  if (alt[0] == ']' || alt[0] == '[') return kBnd;
  const char *r = ref, *a = alt;
  while (*r && *a && Upper(*r) == Upper(*a)) {
    r++;
    a++;
  }
  if (*a && !*r) {
    if (*a == ']' || *a == '[') return kBnd;
    return kIndel;
  }
  if (*r && !*a) return kIndel;
  if (!*r && !*a) return 0;
  const char *re = r, *ae = a;
  while (re[1]) re++;
  while (ae[1]) ae++;
  while (re > r && ae > a && Upper(*re) == Upper(*ae)) {
    re--;
    ae--;
  }
  if (ae == a) {
    if (re == r) return kSnp;
    return Upper(*re) == Upper(*ae) ? kIndel : kOther;
  }
  if (re == r) return Upper(*re) == Upper(*ae) ? kIndel : kOther;
  return (re - r == ae - a) ? kMnp : kOther;
}

class TypesTest : public RecordTest {
 public:
  TypesTest(int mask, bool exclude) : mask_(mask), exclude_(exclude) {}
  unsigned Parts(const Store&) const override { return 0; }
  Status Apply(const Store&, const VariantBlock& b, std::vector<uint8_t>* keep) const override {
    for (uint64_t row = 0; row < b.count; ++row) {
      const int t = VariantTypes(AllelesOf(b, row)) << 1;
      const bool hit = (t & mask_) != 0;
      if (hit == exclude_) (*keep)[row] = 0;
    }
    return OkStatus();
  }
  std::string Canonical() const override {
    return std::string("types ") + (exclude_ ? "^" : "") + std::to_string(mask_);
  }

 private:
  int mask_;
  bool exclude_;
};

class AllelesTest : public RecordTest {
 public:
  AllelesTest(uint64_t lo, uint64_t hi) : lo_(lo), hi_(hi) {}
  unsigned Parts(const Store&) const override { return 0; }
  Status Apply(const Store&, const VariantBlock& b, std::vector<uint8_t>* keep) const override {
    for (uint64_t row = 0; row < b.count; ++row) {
      const uint64_t n = AllelesOf(b, row).size();
      if ((lo_ != 0 && n < lo_) || (hi_ != 0 && n > hi_)) (*keep)[row] = 0;
    }
    return OkStatus();
  }
  std::string Canonical() const override {
    return "alleles " + std::to_string(lo_) + "-" + std::to_string(hi_);
  }

 private:
  uint64_t lo_, hi_;  // 0: no bound
};

class FilterNamesTest : public RecordTest {
 public:
  // `ids`: filter columns; -1 a record without a filter; -2 nothing (an INFO/FORMAT key).
  explicit FilterNamesTest(std::vector<int64_t> ids) : ids_(std::move(ids)) {
    std::sort(ids_.begin(), ids_.end());
    ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
  }
  unsigned Parts(const Store&) const override { return Store::kFilter; }
  Status Apply(const Store& s, const VariantBlock& b, std::vector<uint8_t>* keep) const override {
    const bool none_wanted = std::binary_search(ids_.begin(), ids_.end(), int64_t{-1});
    for (uint64_t row = 0; row < b.count; ++row) {
      bool any = false, hit = false;
      if (!b.filter) {  // every record has the first of filter_id
        any = !s.filters().empty();
        hit = any && std::binary_search(ids_.begin(), ids_.end(), int64_t{0});
      } else {
        const uint64_t nf = b.filter->row_elems;
        for (uint64_t j = 0; j < nf; ++j) {
          if (zarr::IntAt(*b.filter, row * nf + j) == 0) continue;
          any = true;
          hit = hit || std::binary_search(ids_.begin(), ids_.end(), static_cast<int64_t>(j));
        }
      }
      if (!any) hit = none_wanted;
      if (!hit) (*keep)[row] = 0;
    }
    return OkStatus();
  }
  std::string Canonical() const override {
    std::string out = "filter ";
    for (int64_t id : ids_) out += std::to_string(id) + ",";
    return out;
  }

 private:
  std::vector<int64_t> ids_;
};

enum class AlleleType { kNonRef, kMinor, kAlt1, kMajor, kNonMajor };

class FrequencyTest : public RecordTest {
 public:
  FrequencyTest(float af, AlleleType type, bool min, std::string text)
      : af_(af), type_(type), min_(min), text_(std::move(text)) {}
  unsigned Parts(const Store& s) const override {
    size_t i = 0;
    const bool info = FindInfo(s, "AC", &i) && FindInfo(s, "AN", &i);
    return Store::kInfo | Store::kCounts |
           (s.has_genotype() && !info ? unsigned{Store::kGenotype} : 0u);
  }
  // GT only where a row has no usable INFO/AC and AN (and no recount).
  unsigned MoreParts(const Store& s, const VariantBlock& b) const override {
    if (!s.has_genotype() || b.genotype) return 0;
    for (uint64_t row = 0; row < b.count; ++row) {
      if (!b.recounted.empty() && b.recounted[row]) continue;
      if (!CountsFromInfo(s, b, row, AllelesOf(b, row).size())) return Store::kGenotype;
    }
    return 0;
  }
  Status Apply(const Store& s, const VariantBlock& b, std::vector<uint8_t>* keep) const override {
    for (uint64_t row = 0; row < b.count; ++row) {
      const uint64_t n = AllelesOf(b, row).size();
      const std::vector<int64_t> ac = AlleleCounts(s, b, row, n);
      int64_t an = 0, non_ref = 0;
      for (uint64_t i = 0; i < n; ++i) an += ac[i];
      for (uint64_t i = 1; i < n; ++i) non_ref += ac[i];
      int64_t minor = ac[0], major = ac[0];
      for (uint64_t i = 1; i < n; ++i) {
        minor = std::min(minor, ac[i]);
        major = std::max(major, ac[i]);
      }
      double count = 0;
      switch (type_) {
        case AlleleType::kNonRef:
          count = static_cast<double>(non_ref);
          break;
        case AlleleType::kMinor:
          count = static_cast<double>(minor);
          break;
        case AlleleType::kAlt1:
          count = n > 1 ? static_cast<double>(ac[1]) : 0;
          break;
        case AlleleType::kMajor:
          count = static_cast<double>(major);
          break;
        case AlleleType::kNonMajor:
          count = static_cast<double>(an - major);
          break;
      }
      if (an == 0) {  // bcftools: the frequency is not defined, the record skipped
        (*keep)[row] = 0;
        continue;
      }
      const double f = count / static_cast<double>(an);
      const double bound = af_;
      if (min_ ? bound > f : bound < f) (*keep)[row] = 0;
    }
    return OkStatus();
  }
  std::string Canonical() const override {
    return std::string(min_ ? "min-af " : "max-af ") + text_;
  }

 private:
  float af_;
  AlleleType type_;
  bool min_;
  std::string text_;
};

}  // namespace

std::vector<const std::string*> AllelesOf(const VariantBlock& b, uint64_t row) {
  std::vector<const std::string*> out;
  const uint64_t na = b.allele.row_elems;
  if (na == 0) return out;
  static const std::string kDot = ".";
  const std::string& ref = b.allele.strings[row * na];
  out.push_back(StringMissing(ref) ? &kDot : &ref);
  for (uint64_t a = 1; a < na; ++a) {
    const std::string& alt = b.allele.strings[row * na + a];
    if (!StringMissing(alt)) out.push_back(&alt);
  }
  return out;
}

int VariantTypes(const std::vector<const std::string*>& alleles) {
  int t = 0;
  for (size_t i = 1; i < alleles.size(); ++i) t |= TypeOf(alleles[0]->c_str(), alleles[i]->c_str());
  return t & (kSnp | kMnp | kIndel | kOther | kBnd | kOverlap);
}

std::vector<int64_t> AlleleCounts(const Store& s, const VariantBlock& b, uint64_t row,
                                  uint64_t n_allele) {
  std::vector<int64_t> ac(std::max<uint64_t>(n_allele, 1), 0);
  const uint64_t slots = b.allele.row_elems;
  if (!b.recounted.empty() && b.recounted[row]) {  // bcftools view -s wrote AC and AN
    for (uint64_t a = 0; a < n_allele && a < slots; ++a) ac[a] = b.allele_counts[row * slots + a];
    return ac;
  }
  if (auto info = CountsFromInfo(s, b, row, n_allele)) return *info;
  if (b.genotype) {
    const zarr::DenseBlock& gt = *b.genotype;
    const uint64_t calls = gt.row_elems;
    for (uint64_t c = 0; c < calls; ++c) {
      const int64_t allele = zarr::IntAt(gt, row * calls + c);
      if (allele >= 0 && static_cast<uint64_t>(allele) < n_allele) ++ac[allele];
    }
  }
  return ac;
}

std::optional<std::vector<int64_t>> CountsFromInfo(const Store& s, const VariantBlock& b,
                                                   uint64_t row, uint64_t n_allele) {
  std::vector<int64_t> ac(std::max<uint64_t>(n_allele, 1), 0);
  size_t ac_i = 0, an_i = 0;
  if (FindInfo(s, "AC", &ac_i) && FindInfo(s, "AN", &an_i) && ac_i < b.info.size() &&
      an_i < b.info.size() && b.info[ac_i].rows > row && b.info[an_i].rows > row) {
    const zarr::DenseBlock &acb = b.info[ac_i], &anb = b.info[an_i];
    const bool an_given = !AllMissing(anb, row * anb.row_elems, anb.row_elems);
    const bool ac_given = !AllMissing(acb, row * acb.row_elems, acb.row_elems);
    if (an_given && ac_given) {
      const int64_t an = zarr::IntAt(anb, row * anb.row_elems);
      if (an >= 0) {
        // AC's values as written: up to the last that is not fill.
        uint64_t len = acb.row_elems;
        while (len > 0 && zarr::IntAt(acb, row * acb.row_elems + len - 1) == kIntFill) --len;
        if (len != n_allele - 1) return ac;  // bcftools: "Incorrect number of AC fields"
        int64_t nac = 0;
        for (uint64_t i = 0; i < len; ++i) {
          const int64_t v = zarr::IntAt(acb, row * acb.row_elems + i);
          ac[i + 1] = v;
          nac += v;
        }
        ac[0] = an - nac;
        return ac;
      }
    }
  }
  return std::nullopt;
}

Result<std::unique_ptr<RecordTest>> ParseTypes(std::string_view value, bool exclude) {
  int mask = 0;
  for (const std::string& t : SplitComma(value)) {
    if (t == "snps") {
      mask |= kSnp << 1;
    } else if (t == "indels") {
      mask |= kIndel << 1;
    } else if (t == "mnps") {
      mask |= kMnp << 1;
    } else if (t == "other" || t == "ref") {  // bcftools 1.16 reads `ref` as `other`
      mask |= kOther << 1;
    } else if (t == "bnd") {
      mask |= kBnd << 1;
    } else {
      return InvalidArgumentError("types=: unknown type '" + t +
                                  "' (types are snps, indels, mnps, other, bnd)");
    }
  }
  return std::unique_ptr<RecordTest>(new TypesTest(mask, exclude));
}

Result<std::unique_ptr<RecordTest>> ParseAlleles(std::string_view value) {
  auto number = [](std::string_view t, uint64_t* out) {
    if (t.empty() || t.size() > 9 ||
        !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    *out = std::strtoull(std::string(t).c_str(), nullptr, 10);
    return *out > 0;
  };
  const size_t dash = value.find('-');
  uint64_t lo = 0, hi = 0;
  bool ok;
  if (dash == std::string_view::npos) {
    ok = number(value, &lo);
    hi = lo;
  } else {
    ok = number(value.substr(0, dash), &lo) &&
         (dash + 1 == value.size() || number(value.substr(dash + 1), &hi)) && (hi == 0 || hi >= lo);
  }
  if (!ok) {
    return InvalidArgumentError("alleles=" + std::string(value) +
                                ": not N, N-M or N- (counts of alleles, REF included, N >= 1)");
  }
  return std::unique_ptr<RecordTest>(new AllelesTest(lo, hi));
}

Result<std::unique_ptr<RecordTest>> ParseFilterNames(std::string_view value, const Store& s) {
  std::vector<int64_t> ids;
  for (const std::string& name : SplitComma(value)) {
    if (name.empty()) return InvalidArgumentError("filter=: an empty FILTER name");
    if (name == ".") {
      ids.push_back(-1);
      continue;
    }
    auto it = std::find(s.filters().begin(), s.filters().end(), name);
    if (it != s.filters().end()) {
      ids.push_back(it - s.filters().begin());
      continue;
    }
    // bcftools -f looks the name up among every header ID: an INFO or FORMAT key matches no
    // record; a name the header lacks reads as `.` (htslib's -1).
    bool other_key = name == "GT";
    for (const Field& f : s.info()) other_key = other_key || f.key == name;
    for (const Field& f : s.format()) other_key = other_key || f.key == name;
    ids.push_back(other_key ? -2 : -1);
  }
  return std::unique_ptr<RecordTest>(new FilterNamesTest(std::move(ids)));
}

Result<std::unique_ptr<RecordTest>> ParseAlleleFrequency(std::string_view value, bool min) {
  const std::string key = min ? "min-af=" : "max-af=";
  const size_t colon = value.find(':');
  const std::string number(value.substr(0, colon));
  const std::string type =
      colon == std::string_view::npos ? "nref" : std::string(value.substr(colon + 1));
  char* end = nullptr;
  const float af = number.empty() ? 0 : std::strtof(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(af)) {
    return InvalidArgumentError(key + std::string(value) + ": not a frequency X[:TYPE]");
  }
  AlleleType t;
  if (type == "nref") {
    t = AlleleType::kNonRef;
  } else if (type == "minor") {
    t = AlleleType::kMinor;
  } else if (type == "alt1") {
    t = AlleleType::kAlt1;
  } else if (type == "major") {
    t = AlleleType::kMajor;
  } else if (type == "nonmajor") {
    t = AlleleType::kNonMajor;
  } else {
    return InvalidArgumentError(key + std::string(value) + ": unknown allele type '" + type +
                                "' (nref, alt1, minor, major, nonmajor)");
  }
  char canon[64];
  std::snprintf(canon, sizeof canon, "%a:%d", static_cast<double>(af), static_cast<int>(t));
  return std::unique_ptr<RecordTest>(new FrequencyTest(af, t, min, canon));
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> MatchingRows(
    const Store& s, const std::vector<const RecordTest*>& tests, const std::string& what) {
  unsigned parts = Store::kAllele;
  for (const RecordTest* t : tests) parts |= t->Parts(s);
  const uint64_t n = s.num_variants();
  const uint64_t step = std::max<uint64_t>(1, s.range_rows());
  const uint64_t blocks = (n + step - 1) / step;
  std::vector<std::vector<uint8_t>> keep(blocks);
  std::atomic<uint64_t> done{0};
  std::mutex log_mu;
  auto last = std::chrono::steady_clock::now();
  const auto start = last;
  const unsigned width = std::max(2u, std::thread::hardware_concurrency());
  RETURN_IF_ERROR(ParallelFor(blocks, width, [&](size_t i) -> Status {
    const uint64_t v0 = i * step, v1 = std::min(n, v0 + step);
    ASSIGN_OR_RETURN(VariantBlock b, s.ReadParts(v0, v1, parts));
    unsigned more = 0;
    for (const RecordTest* t : tests) more |= t->MoreParts(s, b);
    if ((more & ~parts) != 0) {
      ASSIGN_OR_RETURN(b, s.ReadParts(v0, v1, parts | more));
    }
    std::vector<uint8_t> k(v1 - v0, 1);
    for (const RecordTest* t : tests) RETURN_IF_ERROR(t->Apply(s, b, &k));
    keep[i] = std::move(k);
    const uint64_t d = ++done;
    std::lock_guard<std::mutex> lock(log_mu);
    const auto now = std::chrono::steady_clock::now();
    if (now - last >= std::chrono::seconds(10)) {
      last = now;
      LogInfo(
          what + ": filtering, " + std::to_string(d) + " of " + std::to_string(blocks) +
          " chunks (" +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - start).count()) +
          " s)");
    }
    return OkStatus();
  }));
  // Slice rows -> root rows.
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  const Subset* sub = s.subset();
  std::vector<std::pair<uint64_t, uint64_t>> whole{{0, n}};
  const auto& from = sub != nullptr && sub->runs ? *sub->runs : whole;
  uint64_t v = 0;
  for (const auto& [b, e] : from) {
    for (uint64_t r = b; r < e; ++r, ++v) {
      if (!keep[v / step][v % step]) continue;
      if (!runs.empty() && runs.back().second == r) {
        ++runs.back().second;
      } else {
        runs.emplace_back(r, r + 1);
      }
    }
  }
  return runs;
}

}  // namespace omicsfs::formats::vcz
