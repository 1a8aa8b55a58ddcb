#include "formats/vcz/expr.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "formats/vcz/values.h"

namespace omicsfs::formats::vcz {
namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
bool Miss(double v) { return std::isnan(v); }

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// ---- tokens -------------------------------------------------------------------------------

enum class T { kNum, kStr, kIdent, kOp, kLParen, kRParen, kComma, kEnd };

struct Token {
  Token(T t, std::string x) : type(t), text(std::move(x)) {}
  T type;
  std::string text;       // ident (with [subscript] kept apart), op, string body
  std::string subscript;  // ident[...]: the inside; "" none
  bool has_subscript = false;
  double num = 0;
};

Result<std::vector<Token>> Lex(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  auto ident_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  };
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      const size_t end = s.find(c, i + 1);
      if (end == std::string_view::npos)
        return InvalidArgumentError("an unterminated string at '" + std::string(s.substr(i)) + "'");
      out.emplace_back(T::kStr, std::string(s.substr(i + 1, end - i - 1)));
      i = end + 1;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      const std::string rest(s.substr(i));
      char* end = nullptr;
      const double v = std::strtod(rest.c_str(), &end);
      size_t used = end - rest.c_str();
      // A number glued to letters is a tag name to bcftools (1kg, 2x): refused below as a tag.
      if (used < rest.size() &&
          (std::isalpha(static_cast<unsigned char>(rest[used])) || rest[used] == '_')) {
        size_t e = used;
        while (e < rest.size() && ident_char(rest[e])) ++e;
        return InvalidArgumentError("the tag \"" + rest.substr(0, e) +
                                    "\" is not defined in the VCF header");
      }
      Token t{T::kNum, rest.substr(0, used)};
      t.num = v;
      out.push_back(std::move(t));
      i += used;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      size_t e = i;
      while (e < s.size() && ident_char(s[e])) ++e;
      std::string name(s.substr(i, e - i));
      if (e < s.size() && s[e] == '/' &&
          (name == "INFO" || name == "FORMAT" || name == "FMT")) {  // INFO/DP, FMT/GQ
        size_t f = e + 1;
        while (f < s.size() && ident_char(s[f])) ++f;
        name = std::string(s.substr(i, f - i));
        e = f;
      }
      Token t{T::kIdent, name};
      if (e < s.size() && s[e] == '[') {
        const size_t close = s.find(']', e);
        if (close == std::string_view::npos)
          return InvalidArgumentError("an unterminated subscript after " + name);
        t.subscript = std::string(s.substr(e + 1, close - e - 1));
        t.has_subscript = true;
        e = close + 1;
      }
      out.push_back(std::move(t));
      i = e;
      continue;
    }
    static const char* kOps[] = {"&&", "||", "==", "!=", "<=", ">=", "!~", "&", "|", "=",
                                 "<",  ">",  "~",  "+",  "-",  "*",  "/",  "%", "!"};
    bool matched = false;
    for (const char* op : kOps) {
      const size_t n = std::strlen(op);
      if (s.substr(i, n) == op) {
        out.emplace_back(T::kOp, op);
        i += n;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (c == '(' || c == ')' || c == ',') {
      out.emplace_back(c == '('   ? T::kLParen
                       : c == ')' ? T::kRParen
                                  : T::kComma,
                       std::string(1, c));
      ++i;
      continue;
    }
    return InvalidArgumentError("cannot read '" + std::string(s.substr(i)) + "'");
  }
  out.emplace_back(T::kEnd, "");
  return out;
}

// ---- the tree -----------------------------------------------------------------------------

enum class F {
  kQual,
  kPos,
  kChrom,
  kId,
  kRef,
  kAlt,
  kFilter,
  kType,
  kNAlt,
  kNSamples,
  kNMissing,
  kFMissing,
  kAc,
  kAn,
  kAf,
  kMac,
  kMaf,
  kInfo,
  kFormat,
  kGt,
};

struct Node {
  enum Kind { kNum, kStr, kField, kFunc, kNeg, kArith, kCmp, kLogic } kind;
  double num = 0;
  std::string str;  // kStr: the string; kFunc: name; kArith/kCmp/kLogic: the operator
  F field = F::kQual;
  size_t index = 0;      // kInfo / kFormat: position in Store::info() / format()
  int64_t element = -1;  // [i]; -1 every element
  std::unique_ptr<Node> a, b;
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, const Store& s) : t_(std::move(tokens)), s_(s) {}

  Result<std::unique_ptr<Node>> Parse() {
    ASSIGN_OR_RETURN(auto n, Or());
    if (t_[at_].type != T::kEnd) return InvalidArgumentError("unexpected '" + t_[at_].text + "'");
    return n;
  }

 private:
  const Token& Peek() const { return t_[at_]; }
  bool IsOp(std::initializer_list<const char*> ops) const {
    if (Peek().type != T::kOp) return false;
    for (const char* op : ops)
      if (Peek().text == op) return true;
    return false;
  }
  static std::unique_ptr<Node> Binary(Node::Kind k, std::string op, std::unique_ptr<Node> a,
                                      std::unique_ptr<Node> b) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->str = std::move(op);
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }
  Result<std::unique_ptr<Node>> Or() {
    ASSIGN_OR_RETURN(auto left, And());
    while (IsOp({"||", "|"})) {
      std::string op = t_[at_++].text;
      ASSIGN_OR_RETURN(auto right, And());
      left = Binary(Node::kLogic, op, std::move(left), std::move(right));
    }
    return left;
  }
  Result<std::unique_ptr<Node>> And() {
    ASSIGN_OR_RETURN(auto left, Compare());
    while (IsOp({"&&", "&"})) {
      std::string op = t_[at_++].text;
      ASSIGN_OR_RETURN(auto right, Compare());
      left = Binary(Node::kLogic, op, std::move(left), std::move(right));
    }
    return left;
  }
  Result<std::unique_ptr<Node>> Compare() {
    ASSIGN_OR_RETURN(auto left, Sum());
    if (IsOp({"==", "=", "!=", "<=", ">=", "<", ">", "~", "!~"})) {
      std::string op = t_[at_++].text;
      if (op == "==") op = "=";
      ASSIGN_OR_RETURN(auto right, Sum());
      return Binary(Node::kCmp, op, std::move(left), std::move(right));
    }
    return left;
  }
  Result<std::unique_ptr<Node>> Sum() {
    ASSIGN_OR_RETURN(auto left, Product());
    while (IsOp({"+", "-"})) {
      std::string op = t_[at_++].text;
      ASSIGN_OR_RETURN(auto right, Product());
      left = Binary(Node::kArith, op, std::move(left), std::move(right));
    }
    return left;
  }
  Result<std::unique_ptr<Node>> Product() {
    ASSIGN_OR_RETURN(auto left, Unary());
    while (IsOp({"*", "/", "%"})) {
      std::string op = t_[at_++].text;
      if (op == "%") return InvalidArgumentError("the modulo operator % is not supported");
      ASSIGN_OR_RETURN(auto right, Unary());
      left = Binary(Node::kArith, op, std::move(left), std::move(right));
    }
    return left;
  }
  Result<std::unique_ptr<Node>> Unary() {
    if (IsOp({"!"}))
      return InvalidArgumentError("'!' is not an operator (bcftools cannot parse it either)");
    if (IsOp({"-"})) {
      ++at_;
      ASSIGN_OR_RETURN(auto inner, Unary());
      if (inner->kind == Node::kNum) {
        inner->num = -inner->num;
        return inner;
      }
      auto n = std::make_unique<Node>();
      n->kind = Node::kNeg;
      n->a = std::move(inner);
      return n;
    }
    return Primary();
  }
  Result<std::unique_ptr<Node>> Primary() {
    const Token tok = t_[at_];
    if (tok.type == T::kLParen) {
      ++at_;
      ASSIGN_OR_RETURN(auto inner, Or());
      if (Peek().type != T::kRParen) return InvalidArgumentError("a '(' is not closed");
      ++at_;
      return inner;
    }
    if (tok.type == T::kNum) {
      ++at_;
      auto n = std::make_unique<Node>();
      n->kind = Node::kNum;
      n->num = tok.num;
      return n;
    }
    if (tok.type == T::kStr) {
      ++at_;
      auto n = std::make_unique<Node>();
      n->kind = Node::kStr;
      n->str = tok.text;
      return n;
    }
    if (tok.type == T::kIdent) {
      ++at_;
      if (Peek().type == T::kLParen) return Function(tok);
      return Field(tok);
    }
    if (tok.type == T::kEnd) return InvalidArgumentError("the expression ends too early");
    return InvalidArgumentError("unexpected '" + tok.text + "'");
  }
  Result<std::unique_ptr<Node>> Function(const Token& name) {
    ++at_;  // (
    if (!(EqualsNoCase(name.text, "strlen") || EqualsNoCase(name.text, "abs")))
      return InvalidArgumentError("the function " + name.text + "() is not supported");
    ASSIGN_OR_RETURN(auto arg, Or());
    if (Peek().type != T::kRParen)
      return InvalidArgumentError(name.text + "() takes one argument here");
    ++at_;
    auto n = std::make_unique<Node>();
    n->kind = Node::kFunc;
    n->str = EqualsNoCase(name.text, "strlen") ? "strlen" : "abs";
    n->a = std::move(arg);
    return n;
  }
  std::optional<size_t> InfoIndex(std::string_view key) const {
    for (size_t i = 0; i < s_.info().size(); ++i)
      if (s_.info()[i].key == key) return i;
    return std::nullopt;
  }
  std::optional<size_t> FormatIndex(std::string_view key) const {
    for (size_t i = 0; i < s_.format().size(); ++i)
      if (s_.format()[i].key == key) return i;
    return std::nullopt;
  }
  Result<std::unique_ptr<Node>> Field(const Token& tok) {
    auto n = std::make_unique<Node>();
    n->kind = Node::kField;
    const std::string& name = tok.text;
    auto fixed = [&](F f) -> Result<std::unique_ptr<Node>> {
      if (tok.has_subscript && f != F::kAlt)
        return InvalidArgumentError("a subscript on " + name + " is not supported");
      n->field = f;
      if (tok.has_subscript) RETURN_IF_ERROR(Subscript(tok, n.get()));
      return std::move(n);
    };
    if (name.starts_with("INFO/")) {
      const std::string key = name.substr(5);
      auto i = InfoIndex(key);
      if (!i) return InvalidArgumentError("the tag \"" + key + "\" is not defined as INFO");
      n->field = F::kInfo;
      n->index = *i;
      if (tok.has_subscript) RETURN_IF_ERROR(Subscript(tok, n.get()));
      return n;
    }
    if (name.starts_with("FORMAT/") || name.starts_with("FMT/")) {
      const std::string key = name.substr(name.find('/') + 1);
      return FormatField(tok, key, std::move(n));
    }
    if (name == ".") return InvalidArgumentError("the tag \".\" is not defined in the VCF header");
    // The columns and bcftools' variables (case-insensitive), before the header's tags.
    static const std::pair<const char*, F> kColumns[] = {{"QUAL", F::kQual},
                                                         {"POS", F::kPos},
                                                         {"CHROM", F::kChrom},
                                                         {"ID", F::kId},
                                                         {"REF", F::kRef},
                                                         {"FILTER", F::kFilter},
                                                         {"TYPE", F::kType},
                                                         {"N_ALT", F::kNAlt},
                                                         {"N_SAMPLES", F::kNSamples},
                                                         {"N_MISSING", F::kNMissing},
                                                         {"F_MISSING", F::kFMissing}};
    for (const auto& [col, f] : kColumns)
      if (EqualsNoCase(name, col)) return fixed(f);
    auto info = InfoIndex(name);
    auto format = FormatIndex(name);
    if (name == "GT") return FormatField(tok, "GT", std::move(n));
    if (info && format)
      return InvalidArgumentError("ambiguous: both INFO/" + name + " and FORMAT/" + name +
                                  " are defined");
    if (info) {
      n->field = F::kInfo;
      n->index = *info;
      if (tok.has_subscript) RETURN_IF_ERROR(Subscript(tok, n.get()));
      return n;
    }
    if (EqualsNoCase(name, "ALT")) return fixed(F::kAlt);
    static const std::pair<const char*, F> kComputed[] = {
        {"AN", F::kAn}, {"AC", F::kAc}, {"MAC", F::kMac}, {"AF", F::kAf}, {"MAF", F::kMaf}};
    for (const auto& [col, f] : kComputed) {
      if (EqualsNoCase(name, col)) {
        n->field = f;
        n->element = 0;  // as bcftools: the first ALT's unless [i] or [*] says otherwise
        if (tok.has_subscript) RETURN_IF_ERROR(Subscript(tok, n.get()));
        return n;
      }
    }
    if (format) return FormatField(tok, name, std::move(n));
    return InvalidArgumentError("the tag \"" + name + "\" is not defined in the VCF header");
  }
  Result<std::unique_ptr<Node>> FormatField(const Token& tok, const std::string& key,
                                            std::unique_ptr<Node> n) {
    if (tok.has_subscript && tok.subscript != "*")
      return InvalidArgumentError("a subscript on FORMAT/" + key + " ([" + tok.subscript +
                                  "]) is not supported");
    if (key == "GT") {
      if (!s_.has_genotype()) return InvalidArgumentError("the tag \"GT\" is not defined");
      n->field = F::kGt;
      return n;
    }
    auto i = FormatIndex(key);
    if (!i) return InvalidArgumentError("the tag \"" + key + "\" is not defined as FORMAT");
    if (s_.format()[*i].type == "String" || s_.format()[*i].type == "Character")
      return InvalidArgumentError("FORMAT/" + key + ": string FORMAT fields are not supported");
    n->field = F::kFormat;
    n->index = *i;
    return n;
  }
  Status Subscript(const Token& tok, Node* n) {
    if (tok.subscript == "*") {
      n->element = -1;
      return OkStatus();
    }
    const std::string& sub = tok.subscript;
    if (sub.empty() || sub.size() > 6 ||
        !std::all_of(sub.begin(), sub.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return InvalidArgumentError("the subscript [" + sub + "] of " + tok.text +
                                  " is not supported (only [N] and [*])");
    n->element = std::atoll(sub.c_str());
    return OkStatus();
  }

  std::vector<Token> t_;
  size_t at_ = 0;
  const Store& s_;
};

// ---- values -------------------------------------------------------------------------------

struct Val {
  bool is_str = false;
  bool is_logic = false;
  size_t nsamples = 0;  // > 0: per-sample values, nval1 each
  size_t nval1 = 0;
  std::vector<double> v;  // NaN: missing (or vector end)
  std::vector<std::string> s;
  bool pass = false;
  std::vector<uint8_t> sp;
  size_t n() const { return is_str ? s.size() : v.size(); }
};

struct Row {
  const Store& store;
  const VariantBlock& b;
  uint64_t row;
  std::vector<const std::string*> alleles;
  // Whether the record shows GT: the parent's FORMAT column in a samples slice, else whether
  // any call is given (the view leaves out a GT with every call missing).
  bool HasGenotype() const {
    if (!b.genotype) return false;
    if (!b.recounted.empty()) return b.recounted[row] != 0;
    return !AllMissing(*b.genotype, row * b.genotype->row_elems, b.genotype->row_elems);
  }
};

double NumAt(const zarr::DenseBlock& b, uint64_t i) {
  if (b.dtype == zarr::DType::kFloat32 || b.dtype == zarr::DType::kFloat64) {
    const float f = FloatAt(b, i);
    const uint32_t u = Bits(f);
    if (u == kFloatMissing || u == kFloatFill) return kMissing;
    return b.dtype == zarr::DType::kFloat64 ? [&] {
      double d;
      std::memcpy(&d, b.raw() + i * 8, 8);
      return d;
    }()
                                            : static_cast<double>(f);
  }
  const int64_t x = zarr::IntAt(b, i);
  if (b.dtype != zarr::DType::kBool && (x == kIntMissing || x == kIntFill)) return kMissing;
  return static_cast<double>(x);
}

bool IsFill(const zarr::DenseBlock& b, uint64_t i) {
  if (zarr::IsString(b.dtype)) return b.strings[i].empty();
  if (b.dtype == zarr::DType::kFloat32 || b.dtype == zarr::DType::kFloat64)
    return Bits(FloatAt(b, i)) == kFloatFill;
  if (b.dtype == zarr::DType::kBool) return false;
  return zarr::IntAt(b, i) == kIntFill;
}

void SplitInto(const std::string& text, std::vector<std::string>* out) {
  size_t from = 0;
  for (;;) {
    const size_t comma = text.find(',', from);
    out->push_back(
        text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
}

std::vector<int64_t> Counts(const Row& r, bool* ok) {
  const uint64_t n = r.alleles.size();
  std::vector<int64_t> ac = AlleleCounts(r.store, r.b, r.row, n);
  int64_t an = 0;
  for (uint64_t i = 0; i < n; ++i) an += ac[i];
  *ok = an != 0;
  return ac;
}

Val FieldValue(const Node& n, const Row& r) {
  Val out;
  const VariantBlock& b = r.b;
  const uint64_t row = r.row;
  auto num = [&](double x) { out.v.push_back(x); };
  switch (n.field) {
    case F::kQual:
      if (b.quality) num(NumAt(*b.quality, row));
      if (!out.v.empty() && Miss(out.v[0])) out.v.clear();
      break;
    case F::kPos:
      num(NumAt(b.position, row));
      break;
    case F::kChrom:
      out.is_str = true;
      out.s.push_back(r.store.contigs()[zarr::IntAt(b.contig, row)]);
      break;
    case F::kRef:
      out.is_str = true;
      out.s.push_back(*r.alleles[0]);
      break;
    case F::kAlt: {
      out.is_str = true;
      if (r.alleles.size() == 1) {
        out.s.push_back(".");
      } else if (n.element >= 0) {
        if (static_cast<size_t>(n.element) + 1 < r.alleles.size())
          out.s.push_back(*r.alleles[n.element + 1]);
      } else {
        for (size_t i = 1; i < r.alleles.size(); ++i) out.s.push_back(*r.alleles[i]);
      }
      break;
    }
    case F::kNAlt:
      num(static_cast<double>(r.alleles.size()) - 1);
      break;
    case F::kNSamples:
      num(static_cast<double>(r.store.samples().size()));
      break;
    case F::kNMissing:
    case F::kFMissing: {
      const size_t ns = r.store.samples().size();
      if (ns == 0) {
        num(0);
        break;
      }
      if (!r.HasGenotype()) break;
      const zarr::DenseBlock& gt = *b.genotype;
      const uint64_t ploidy = gt.row_elems / ns;
      uint64_t missing = 0;
      for (size_t i = 0; i < ns; ++i) {
        for (uint64_t j = 0; j < ploidy; ++j) {
          const int64_t a = zarr::IntAt(gt, row * gt.row_elems + i * ploidy + j);
          if (a == kIntFill) break;
          if (a < 0) {
            ++missing;
            break;
          }
        }
      }
      num(n.field == F::kNMissing ? static_cast<double>(missing)
                                  : static_cast<double>(missing) / static_cast<double>(ns));
      break;
    }
    case F::kAc:
    case F::kAn:
    case F::kAf:
    case F::kMac:
    case F::kMaf: {
      bool ok = false;
      std::vector<int64_t> ac = Counts(r, &ok);
      const size_t na = r.alleles.size();
      int64_t an = 0;
      for (size_t i = 0; i < na; ++i) an += ac[i];
      if (n.field == F::kAn) {
        num(ok ? static_cast<double>(an) : 0);
        break;
      }
      if (!ok) break;
      std::vector<double> vals;
      if (n.element >= 0) {
        vals.push_back(static_cast<size_t>(n.element) + 1 < na ? ac[n.element + 1] : 0);
      } else if (na == 1) {
        vals.push_back(0);
      } else {
        for (size_t i = 1; i < na; ++i) vals.push_back(static_cast<double>(ac[i]));
      }
      for (double& x : vals) {
        if (n.field == F::kMac && x > an * 0.5) x = an - x;
        if (n.field == F::kAf || n.field == F::kMaf) x /= static_cast<double>(an);
        if (n.field == F::kMaf && x > 0.5) x = 1 - x;
      }
      out.v = std::move(vals);
      break;
    }
    case F::kInfo: {
      const Field& f = r.store.info()[n.index];
      if (n.index >= b.info.size()) break;
      const zarr::DenseBlock& blk = b.info[n.index];
      if ((f.key == "AC" || f.key == "AN") && !b.recounted.empty() && b.recounted[row]) {
        // bcftools view -s rewrote them from the chosen samples' calls (AC dropped without ALT).
        const uint64_t slots = b.allele.row_elems, na = r.alleles.size();
        const uint32_t* counts = &b.allele_counts[row * slots];
        if (f.key == "AN") {
          double an = 0;
          for (uint64_t a = 0; a < na; ++a) an += counts[a];
          num(an);
        } else if (na > 1) {
          if (n.element >= 0) {
            const uint64_t at = na == 2 ? 1 : static_cast<uint64_t>(n.element) + 1;
            if (at < na) num(counts[at]);
          } else {
            for (uint64_t a = 1; a < na; ++a) num(counts[a]);
          }
        }
        break;
      }
      const uint64_t w = blk.row_elems, first = row * w;
      if (f.type == "Flag") {
        num(blk.rows > row && zarr::IntAt(blk, first) != 0 ? 1 : 0);
        break;
      }
      if (AllMissing(blk, first, w)) {
        out.is_str = zarr::IsString(blk.dtype);
        break;
      }
      uint64_t len = w;
      while (len > 0 && IsFill(blk, first + len - 1)) --len;
      if (zarr::IsString(blk.dtype)) {
        out.is_str = true;
        std::vector<std::string> all;
        for (uint64_t i = 0; i < len; ++i) {
          const std::string& x = blk.strings[first + i];
          SplitInto(StringMissing(x) ? "." : x, &all);
        }
        if (n.element >= 0) {
          if (static_cast<size_t>(n.element) < all.size()) out.s.push_back(all[n.element]);
        } else {
          out.s = std::move(all);
        }
        break;
      }
      // bcftools copies INFO integers as they are: a missing one is INT32_MIN, not missing.
      auto info_num = [&](uint64_t i) {
        const double x = NumAt(blk, i);
        return Miss(x) && f.type == "Integer" ? -2147483648.0 : x;
      };
      if (n.element >= 0) {
        // bcftools' bcf_get_info_value: a single value whatever the index; a missing one none.
        const uint64_t at = len == 1 ? 0 : static_cast<uint64_t>(n.element);
        if (at < len && (len == 1 || !Miss(NumAt(blk, first + at)))) num(info_num(first + at));
      } else {
        for (uint64_t i = 0; i < len; ++i) num(info_num(first + i));
      }
      break;
    }
    case F::kFormat: {
      const size_t ns = r.store.samples().size();
      if (ns == 0 || n.index >= b.format.size()) break;  // no samples: no FORMAT values
      const zarr::DenseBlock& blk = b.format[n.index];
      const uint64_t per = blk.row_elems / ns, first = row * blk.row_elems;
      uint64_t width = 0;  // the record's values per sample (BCF pads to the longest)
      for (size_t i = 0; i < ns; ++i) {
        uint64_t len = per;
        while (len > 0 && IsFill(blk, first + i * per + len - 1)) --len;
        width = std::max(width, len);
      }
      if (width == 0) break;
      out.nsamples = ns;
      out.nval1 = width;
      for (size_t i = 0; i < ns; ++i)
        for (uint64_t j = 0; j < width; ++j) num(NumAt(blk, first + i * per + j));
      break;
    }
    case F::kId:
    case F::kFilter:
    case F::kType:
    case F::kGt:
      break;  // compared by their own rules
  }
  return out;
}

// A comparison of numbers (bcftools' CMP_VECTORS): missing values by `ml` ([0]: a missing
// value of a per-sample operand is compared at all; [1]: one side missing passes; [2]: both).
template <typename Cmp>
void CompareNumbers(const Val& a, const Val& b, Val* r, const int ml[3], Cmp cmp) {
  auto test = [&](double x, double y) {
    if (x > 16777216 || y > 16777216) return cmp(x, y);
    return cmp(static_cast<double>(static_cast<float>(x)),
               static_cast<double>(static_cast<float>(y)));
  };
  r->nsamples = std::max(a.nsamples, b.nsamples);
  r->sp.assign(r->nsamples, 0);
  if (!a.nsamples && !b.nsamples) {
    if (a.n() == 0 && b.n() == 0) {
      r->pass = ml[2];
    } else if (a.n() == 0 || b.n() == 0) {
      const Val& t = a.n() ? a : b;
      for (double x : t.v) {
        if (Miss(x) ? ml[2] : ml[1]) {
          r->pass = true;
          break;
        }
      }
    } else {
      for (double x : a.v) {
        for (double y : b.v) {
          const int nmiss = Miss(x) + Miss(y);
          if (nmiss ? ml[nmiss] : test(x, y)) {
            r->pass = true;
            return;
          }
        }
      }
    }
    return;
  }
  auto set = [&](size_t i) {
    r->sp[i] = 1;
    r->pass = true;
  };
  if (a.n() == 0 && b.n() == 0) {
    if (ml[2])
      for (size_t i = 0; i < r->nsamples; ++i) set(i);
    return;
  }
  if (a.n() == 0 || b.n() == 0) {
    const Val& t = a.n() ? a : b;
    if (!t.nsamples) {
      int miss = 0;
      for (double x : t.v) miss |= Miss(x);
      if (ml[miss + 1])
        for (size_t i = 0; i < r->nsamples; ++i) set(i);
    } else {
      for (size_t i = 0; i < t.nsamples; ++i) {
        int miss = 0;
        for (size_t j = 0; j < t.nval1; ++j) miss |= Miss(t.v[i * t.nval1 + j]);
        if (ml[miss + 1]) set(i);
      }
    }
    return;
  }
  if (a.nsamples && b.nsamples) {
    const size_t w = std::min(a.nval1, b.nval1);
    for (size_t i = 0; i < r->nsamples; ++i) {
      for (size_t j = 0; j < w; ++j) {
        const double x = a.v[i * a.nval1 + j], y = b.v[i * b.nval1 + j];
        int nmiss = Miss(x);
        if (nmiss && !ml[0]) continue;
        nmiss += Miss(y);
        if (nmiss ? ml[nmiss] : test(x, y)) {
          set(i);
          break;
        }
      }
    }
    return;
  }
  const bool a_samples = a.nsamples != 0;
  const Val& p = a_samples ? a : b;  // per sample
  const Val& q = a_samples ? b : a;  // site
  for (size_t i = 0; i < p.nsamples; ++i) {
    bool hit = false;
    for (size_t j = 0; j < p.nval1 && !hit; ++j) {
      const double x = p.v[i * p.nval1 + j];
      const int miss = Miss(x);
      if (miss && !ml[0]) continue;
      for (double y : q.v) {
        const int nmiss = miss + Miss(y);
        const bool ok = nmiss ? ml[nmiss] : (a_samples ? test(x, y) : test(y, x));
        if (ok) {
          hit = true;
          break;
        }
      }
    }
    if (hit) set(i);
  }
}

// Strings (bcftools' cmp_vector_strings, site values): elements compared pairwise, "." missing.
void CompareStrings(const Val& a, const Val& b, Val* r, bool ne) {
  const int ml[3] = {1, ne ? 1 : 0, ne ? 0 : 1};
  auto missing = [](const std::string& x) { return x == "."; };
  if (a.n() == 0 && b.n() == 0) {
    r->pass = ml[2];
    return;
  }
  if (a.n() == 0 || b.n() == 0) {
    const Val& t = a.n() ? a : b;
    bool miss = std::any_of(t.s.begin(), t.s.end(), missing);
    r->pass = ml[miss + 1];
    return;
  }
  for (const std::string& x : a.s) {
    for (const std::string& y : b.s) {
      const int nmiss = missing(x) + missing(y);
      if (nmiss) {
        if (ml[nmiss]) {
          r->pass = true;
          return;
        }
      } else if ((x == y) != ne) {
        r->pass = true;
        return;
      }
    }
  }
}

class Evaluator {
 public:
  explicit Evaluator(const Row& r) : r_(r) {}

  Result<Val> Eval(const Node& n) {
    switch (n.kind) {
      case Node::kNum: {
        Val v;
        v.v.push_back(n.num);
        return v;
      }
      case Node::kStr: {
        Val v;
        v.is_str = true;
        SplitInto(n.str, &v.s);
        return v;
      }
      case Node::kField:
        if (n.field == F::kId || n.field == F::kFilter || n.field == F::kType || n.field == F::kGt)
          return InvalidArgumentError("use " + FieldName(n) + " in a comparison with a string");
        return FieldValue(n, r_);
      case Node::kFunc: {
        ASSIGN_OR_RETURN(Val a, Eval(*n.a));
        if (a.is_logic) return InvalidArgumentError(n.str + "() of a condition");
        Val out;
        out.nsamples = a.nsamples;
        out.nval1 = a.nval1;
        if (n.str == "strlen") {
          if (!a.is_str) return InvalidArgumentError("strlen() of a number");
          for (const std::string& x : a.s)
            out.v.push_back(x == "." ? 0 : static_cast<double>(x.size()));
        } else {
          if (a.is_str) return InvalidArgumentError("abs() of a string");
          for (double x : a.v) out.v.push_back(Miss(x) ? x : std::fabs(x));
        }
        return out;
      }
      case Node::kNeg: {
        ASSIGN_OR_RETURN(Val a, Eval(*n.a));
        if (a.is_str || a.is_logic) return InvalidArgumentError("'-' before a string");
        for (double& x : a.v) x = -x;
        return a;
      }
      case Node::kArith:
        return Arith(n);
      case Node::kCmp:
        return Compare(n);
      case Node::kLogic:
        return Logic(n);
    }
    return InternalError("expression node");
  }

 private:
  static std::string FieldName(const Node& n) {
    switch (n.field) {
      case F::kId:
        return "ID";
      case F::kFilter:
        return "FILTER";
      case F::kType:
        return "TYPE";
      default:
        return "GT";
    }
  }

  Result<Val> Arith(const Node& n) {
    ASSIGN_OR_RETURN(Val a, Eval(*n.a));
    ASSIGN_OR_RETURN(Val b, Eval(*n.b));
    if (a.is_str || b.is_str || a.is_logic || b.is_logic)
      return InvalidArgumentError("arithmetic '" + n.str + "' of a string or a condition");
    auto op = [&](double x, double y) {
      if (Miss(x) || Miss(y)) return kMissing;
      if (n.str == "+") return x + y;
      if (n.str == "-") return x - y;
      if (n.str == "*") return x * y;
      return x / y;
    };
    Val r;
    if (a.v.empty() || b.v.empty()) return r;  // no value
    if ((a.nsamples != 0) == (b.nsamples != 0)) {
      if (a.v.size() != b.v.size()) {
        if (a.v.size() == 1 || b.v.size() == 1) {
          const Val& many = a.v.size() == 1 ? b : a;
          r.nsamples = many.nsamples;
          r.nval1 = many.nval1;
          for (size_t i = 0; i < many.v.size(); ++i)
            r.v.push_back(a.v.size() == 1 ? op(a.v[0], b.v[i]) : op(a.v[i], b.v[0]));
        } else {
          return InvalidArgumentError("arithmetic '" + n.str + "' of arrays of different lengths");
        }
      } else {
        r.nsamples = a.nsamples;
        r.nval1 = a.nval1;
        for (size_t i = 0; i < a.v.size(); ++i) r.v.push_back(op(a.v[i], b.v[i]));
      }
    } else {
      const Val& p = a.nsamples ? a : b;
      const Val& q = a.nsamples ? b : a;
      if (q.v.size() != 1)
        return InvalidArgumentError("arithmetic '" + n.str + "' of FORMAT and INFO arrays");
      if (Miss(q.v[0])) return r;
      r.nsamples = p.nsamples;
      r.nval1 = p.nval1;
      for (double x : p.v) r.v.push_back(a.nsamples ? op(x, q.v[0]) : op(q.v[0], x));
    }
    if (std::all_of(r.v.begin(), r.v.end(), Miss)) {
      r.v.clear();
      r.nsamples = r.nval1 = 0;
    }
    return r;
  }

  Result<Val> Compare(const Node& n) {
    const Node* special = nullptr;
    const Node* other = nullptr;
    for (auto [x, y] : {std::pair{n.a.get(), n.b.get()}, std::pair{n.b.get(), n.a.get()}}) {
      if (x->kind == Node::kField && (x->field == F::kId || x->field == F::kFilter ||
                                      x->field == F::kType || x->field == F::kGt)) {
        special = x;
        other = y;
        break;
      }
    }
    if (special != nullptr) {
      if (other->kind != Node::kStr)
        return InvalidArgumentError(FieldName(*special) + " is compared with a string here");
      return CompareSpecial(*special, n.str, other->str);
    }
    if (n.str == "~" || n.str == "!~")
      return InvalidArgumentError("regular expressions (" + n.str + ") are not supported");
    ASSIGN_OR_RETURN(Val a, Eval(*n.a));
    ASSIGN_OR_RETURN(Val b, Eval(*n.b));
    if (a.is_logic || b.is_logic) return InvalidArgumentError("a comparison of a condition");
    Val r;
    r.is_logic = true;
    // "." beside a number is a missing value.
    auto dot = [](const Node& x, const Val& v) {
      return x.kind == Node::kStr && v.s.size() == 1 && v.s[0] == ".";
    };
    if (a.is_str != b.is_str) {
      if (dot(*n.b, b)) {
        b = Val();
      } else if (dot(*n.a, a)) {
        a = Val();
      } else {
        return InvalidArgumentError("a string compared with a number");
      }
    }
    if (a.is_str && b.is_str) {
      if (n.str != "=" && n.str != "!=")
        return InvalidArgumentError("strings are compared with = and != only");
      if (a.nsamples || b.nsamples) return InvalidArgumentError("FORMAT strings");
      CompareStrings(a, b, &r, n.str == "!=");
      return r;
    }
    int ml[3] = {0, 0, 0};
    if (n.str == "=") ml[0] = ml[2] = 1;
    if (n.str == "!=") ml[0] = ml[1] = 1;
    if (n.str == "=") CompareNumbers(a, b, &r, ml, [](double x, double y) { return x == y; });
    if (n.str == "!=") CompareNumbers(a, b, &r, ml, [](double x, double y) { return x != y; });
    if (n.str == "<") CompareNumbers(a, b, &r, ml, [](double x, double y) { return x < y; });
    if (n.str == "<=") CompareNumbers(a, b, &r, ml, [](double x, double y) { return x <= y; });
    if (n.str == ">") CompareNumbers(a, b, &r, ml, [](double x, double y) { return x > y; });
    if (n.str == ">=") CompareNumbers(a, b, &r, ml, [](double x, double y) { return x >= y; });
    return r;
  }

  Result<Val> CompareSpecial(const Node& f, const std::string& op, const std::string& text) {
    Val r;
    r.is_logic = true;
    const VariantBlock& b = r_.b;
    const uint64_t row = r_.row;
    switch (f.field) {
      case F::kId: {
        if (op != "=" && op != "!=")
          return InvalidArgumentError("ID is compared with = and != only");
        std::string id = ".";
        if (b.id) {
          const std::string& x = b.id->strings[row * b.id->row_elems];
          if (!StringMissing(x)) id = x;
        }
        r.pass = (id == text) == (op == "=");
        return r;
      }
      case F::kFilter: {
        std::vector<int64_t> have;
        const auto& names = r_.store.filters();
        if (!b.filter) {
          if (!names.empty()) have.push_back(0);
        } else {
          for (uint64_t j = 0; j < b.filter->row_elems; ++j)
            if (zarr::IntAt(*b.filter, row * b.filter->row_elems + j) != 0)
              have.push_back(static_cast<int64_t>(j));
        }
        std::vector<int64_t> want;
        if (text != ".") {
          size_t from = 0;
          for (;;) {
            const size_t semi = text.find(';', from);
            const std::string name =
                text.substr(from, semi == std::string::npos ? semi : semi - from);
            auto it = std::find(names.begin(), names.end(), name);
            if (it == names.end())
              return InvalidArgumentError("the filter \"" + name + "\" is not defined");
            want.push_back(it - names.begin());
            if (semi == std::string::npos) break;
            from = semi + 1;
          }
        }
        auto all_in = [&] {
          for (int64_t w : want)
            if (std::find(have.begin(), have.end(), w) == have.end()) return false;
          return true;
        };
        if (op == "=") {
          r.pass = want.size() == have.size() && (want.empty() || all_in());
        } else if (op == "!=") {
          r.pass = want.size() != have.size() || (!want.empty() && !all_in());
        } else if (op == "~") {
          r.pass = want.empty() ? have.empty() : (!have.empty() && all_in());
        } else if (op == "!~") {
          r.pass = want.empty() ? !have.empty() : (have.empty() || !all_in());
        } else {
          return InvalidArgumentError("FILTER is compared with =, !=, ~ and !~ only");
        }
        return r;
      }
      case F::kType: {
        static const std::pair<const char*, int> kTypes[] = {
            {"ref", 0},   {"snp", 1},    {"snps", 1},  {"mnp", 2},  {"mnps", 2},
            {"indel", 4}, {"indels", 4}, {"other", 8}, {"bnd", 16}, {"overlap", 32}};
        int want = -1;
        for (const auto& [name, bits] : kTypes)
          if (EqualsNoCase(text, name)) want = bits;
        if (want < 0) return InvalidArgumentError("TYPE=\"" + text + "\": not a variant type");
        const int have = VariantTypes(r_.alleles);
        bool hit;
        if (op == "=" || op == "!=") {
          hit = want == 0 ? have == 0 : have == want;
          if (op == "!=") hit = !hit;
        } else if (op == "~" || op == "!~") {
          hit = want == 0 ? have == 0 : (have & want) != 0;
          if (op == "!~") hit = !hit;
        } else {
          return InvalidArgumentError("TYPE is compared with =, !=, ~ and !~ only");
        }
        r.pass = hit;
        return r;
      }
      case F::kGt:
        return CompareGenotype(op, text);
      default:
        return InternalError("special field");
    }
  }

  // GT="het|hom|alt|ref|mis|hap": per sample, by its class (bcftools' bcf_gt_type).
  Result<Val> CompareGenotype(const std::string& op, const std::string& text) {
    if (op != "=" && op != "!=")
      return InvalidArgumentError("GT is compared with = and != only here");
    static const char* kClasses[] = {"het", "hom", "alt", "ref", "mis", "hap"};
    std::string cls;
    for (const char* c : kClasses)
      if (EqualsNoCase(text, c)) cls = c;
    if (cls.empty())
      return InvalidArgumentError("GT=\"" + text +
                                  "\" is not supported (het, hom, alt, ref, mis, hap)");
    Val r;
    r.is_logic = true;
    const size_t ns = r_.store.samples().size();
    r.nsamples = ns;
    r.sp.assign(ns, 0);
    if (!r_.HasGenotype() || ns == 0) {  // no GT in the record: bcftools' != passes
      if (op == "!=") {
        r.sp.assign(ns, 1);
        r.pass = true;
      }
      return r;
    }
    const zarr::DenseBlock& gt = *r_.b.genotype;
    const uint64_t ploidy = gt.row_elems / ns;
    for (size_t i = 0; i < ns; ++i) {
      int n = 0, nmiss = 0, nref = 0;
      int64_t first = -1;
      bool differ = false;
      for (uint64_t j = 0; j < ploidy; ++j) {
        const int64_t a = zarr::IntAt(gt, row_() * gt.row_elems + i * ploidy + j);
        if (a == kIntFill) break;
        ++n;
        if (a < 0) {
          ++nmiss;
          continue;
        }
        if (a == 0) ++nref;
        if (first < 0)
          first = a;
        else if (a != first)
          differ = true;
      }
      bool is = false;
      if (cls == "mis") {
        is = nmiss > 0 || n == 0;
      } else if (nmiss == 0 && n > 0) {
        if (cls == "ref") is = nref == n;
        if (cls == "alt") is = nref < n;
        if (cls == "hom") is = n > 1 && !differ;
        if (cls == "het") is = n > 1 && differ;
        if (cls == "hap") is = n == 1;
      }
      if (op == "!=") is = !is;
      if (is) {
        r.sp[i] = 1;
        r.pass = true;
      }
    }
    return r;
  }
  uint64_t row_() const { return r_.row; }

  Result<Val> Logic(const Node& n) {
    ASSIGN_OR_RETURN(Val a, Eval(*n.a));
    ASSIGN_OR_RETURN(Val b, Eval(*n.b));
    if (!a.is_logic || !b.is_logic)
      return InvalidArgumentError("'" + n.str + "' joins conditions, not values");
    Val r;
    r.is_logic = true;
    r.nsamples = std::max(a.nsamples, b.nsamples);
    r.sp.assign(r.nsamples, 0);
    if (n.str == "&&" || n.str == "&") {
      if (!a.pass || !b.pass) return r;
      if (!a.nsamples && !b.nsamples) {
        r.pass = true;
        return r;
      }
      if (!a.nsamples || !b.nsamples) {
        r.sp = (a.nsamples ? a : b).sp;
        r.pass = true;
        return r;
      }
      for (size_t i = 0; i < r.nsamples; ++i) {
        r.sp[i] = n.str == "&&" ? (a.sp[i] | b.sp[i]) : (a.sp[i] & b.sp[i]);
        if (n.str == "&&" || r.sp[i]) r.pass = true;
      }
      return r;
    }
    if (!a.pass && !b.pass) return r;
    r.pass = true;
    if (!a.nsamples && !b.nsamples) return r;
    if (n.str == "||") {
      if ((!a.nsamples && !a.pass) || (!b.nsamples && !b.pass)) {
        r.sp = (a.nsamples ? a : b).sp;
      } else {
        r.sp.assign(r.nsamples, 1);
      }
      return r;
    }
    if (!a.nsamples || !b.nsamples) {
      r.sp = (a.nsamples ? a : b).sp;
      return r;
    }
    for (size_t i = 0; i < r.nsamples; ++i) r.sp[i] = a.sp[i] | b.sp[i];
    return r;
  }

  const Row& r_;
};

// What a tree reads.
unsigned PartsOf(const Node& n, const Store& s) {
  unsigned p = 0;
  if (n.a) p |= PartsOf(*n.a, s);
  if (n.b) p |= PartsOf(*n.b, s);
  if (n.kind != Node::kField) return p;
  switch (n.field) {
    case F::kQual:
      return p | Store::kQuality;
    case F::kPos:
      return p | Store::kPosition;
    case F::kChrom:
      return p | Store::kContig;
    case F::kId:
      return p | Store::kId;
    case F::kFilter:
      return p | Store::kFilter;
    case F::kNMissing:
    case F::kFMissing:
    case F::kGt:
      return p | Store::kGenotype | Store::kCounts;
    case F::kAc:
    case F::kAn:
    case F::kAf:
    case F::kMac:
    case F::kMaf:
      return p | Store::kInfo | Store::kCounts | Store::kGenotype;
    case F::kInfo:
      return p | Store::kInfo | Store::kCounts;
    case F::kFormat:
      return p | Store::kFormat;
    default:
      return p;
  }
}

class ExpressionTest : public RecordTest {
 public:
  ExpressionTest(std::unique_ptr<Node> root, bool exclude, std::string text)
      : root_(std::move(root)), exclude_(exclude), text_(std::move(text)) {}
  unsigned Parts(const Store& s) const override { return PartsOf(*root_, s); }
  Status Apply(const Store& s, const VariantBlock& b, std::vector<uint8_t>* keep) const override {
    for (uint64_t row = 0; row < b.count; ++row) {
      if (!(*keep)[row]) continue;
      Row r{s, b, row, AllelesOf(b, row)};
      Evaluator e(r);
      auto v = e.Eval(*root_);
      if (!v.ok()) return v.status();
      if (!v->is_logic)
        return InvalidArgumentError("the expression is a value, not a condition (compare it)");
      if (v->pass == exclude_) (*keep)[row] = 0;
    }
    return OkStatus();
  }
  std::string Canonical() const override {
    return std::string(exclude_ ? "exclude " : "include ") + text_;
  }

 private:
  std::unique_ptr<Node> root_;
  bool exclude_;
  std::string text_;
};

}  // namespace

Result<std::unique_ptr<RecordTest>> ParseExpression(std::string_view text, bool exclude,
                                                    const Store& s) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text));
  Parser p(std::move(tokens), s);
  ASSIGN_OR_RETURN(std::unique_ptr<Node> root, p.Parse());
  // A bare value is no condition to bcftools either (it keeps nothing): refused.
  if (root->kind != Node::kCmp && root->kind != Node::kLogic)
    return InvalidArgumentError("the expression is a value, not a condition (compare it)");
  return std::unique_ptr<RecordTest>(
      new ExpressionTest(std::move(root), exclude, std::string(text)));
}

}  // namespace omicsfs::formats::vcz
