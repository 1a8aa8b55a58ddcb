#include "text/dataframe_source.h"

#include <charconv>
#include <cmath>

#include "text/number_format.h"

namespace omicsfs::text {

using formats::anndata::Column;
using formats::anndata::Table;

void AppendNumpyFloat(std::string* out, double v, bool single) {
  if (std::isinf(v)) {
    out->append(v < 0 ? "-inf" : "inf");
    return;
  }
  if (v == 0) {
    out->append(std::signbit(v) ? "-0.0" : "0.0");
    return;
  }
  char buf[64];
  // The shortest digits that round-trip to the stored type, as d.ddde±X.
  const auto r = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v),
                                        std::chars_format::scientific)
                        : std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  const bool negative = s.front() == '-';
  if (negative) s.remove_prefix(1);
  const size_t e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exp = 0;
  std::from_chars(s.data() + e + 1 + (s[e + 1] == '+'), s.data() + s.size(), exp);
  if (negative) out->push_back('-');
  const double a = std::fabs(v);
  if (a >= 1e-4 && a < 1e16) {  // positional
    if (exp >= 0) {
      const size_t whole = static_cast<size_t>(exp) + 1;
      if (digits.size() <= whole) {
        out->append(digits);
        out->append(whole - digits.size(), '0');
        out->append(".0");
      } else {
        out->append(digits, 0, whole);
        out->push_back('.');
        out->append(digits, whole);
      }
    } else {
      out->append("0.");
      out->append(static_cast<size_t>(-exp - 1), '0');
      out->append(digits);
    }
    return;
  }
  out->push_back(digits[0]);
  if (digits.size() > 1) {
    out->push_back('.');
    out->append(digits, 1);
  }
  out->push_back('e');
  out->push_back(exp < 0 ? '-' : '+');
  const int ae = exp < 0 ? -exp : exp;
  if (ae < 10) out->push_back('0');
  AppendUInt(out, static_cast<uint64_t>(ae));
}

namespace {

// A field as Python's csv writer (QUOTE_MINIMAL, lineterminator "\n") writes it.
void AppendField(std::string* out, std::string_view f) {
  if (f.find_first_of("\t\"\n") == std::string_view::npos) {
    out->append(f);
    return;
  }
  out->push_back('"');
  for (char c : f) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

// Row i of a column as pandas writes it (`quote`: strings as csv fields).
void AppendValue(std::string* out, const Column& c, uint64_t i, bool quote = true) {
  if (!c.missing.empty() && c.missing[i]) return;
  switch (c.type) {
    case Column::Type::kString:
      if (!quote) return (void)out->append(c.strings[i]);
      return AppendField(out, c.strings[i]);
    case Column::Type::kInt:
      return AppendInt(out, c.ints[i]);
    case Column::Type::kUInt:
      return AppendUInt(out, c.uints[i]);
    case Column::Type::kFloat32:
      if (std::isnan(c.f32[i])) return;
      return AppendNumpyFloat(out, c.f32[i], true);
    case Column::Type::kFloat64:
      if (std::isnan(c.f64[i])) return;
      return AppendNumpyFloat(out, c.f64[i], false);
    case Column::Type::kBool:
      out->append(c.bools[i] ? "True" : "False");
      return;
    case Column::Type::kCategorical:
      if (c.codes[i] >= 0)
        AppendValue(out, *c.categories, static_cast<uint64_t>(c.codes[i]), quote);
      return;
  }
}

// A line: its fields written, then "" when it is one empty field.
void EndLine(std::string* out, size_t start, size_t fields) {
  if (fields == 1 && out->size() == start) out->append("\"\"");
  out->push_back('\n');
}

}  // namespace

void AppendCellText(std::string* out, const Column& c, uint64_t i) {
  AppendValue(out, c, i, /*quote=*/false);
}

Result<const Table*> DataFrameSource::Loaded() const {
  std::call_once(once_, [this] {
    table_ = load_();
    if (table_.ok() && (*table_)->index->size() != rows_) {
      table_ =
          CorruptError(describe_ + ": the table has " + std::to_string((*table_)->index->size()) +
                       " rows, not " + std::to_string(rows_));
    }
  });
  if (!table_.ok()) return table_.status();
  return table_->get();
}

Status DataFrameSource::RenderChunk(uint64_t k, std::string* out) const {
  ASSIGN_OR_RETURN(const Table* t, Loaded());
  if (k == 0) {
    const size_t start = out->size();
    AppendField(out, t->index_name);
    for (const Column& c : t->columns) {
      out->push_back('\t');
      AppendField(out, c.name);
    }
    EndLine(out, start, 1 + t->columns.size());
    return OkStatus();
  }
  const uint64_t r0 = (k - 1) * kRowsPerChunk;
  const uint64_t r1 = std::min(rows_, r0 + kRowsPerChunk);
  for (uint64_t r = r0; r < r1; ++r) {
    const size_t start = out->size();
    AppendField(out, (*t->index)[r]);
    for (const Column& c : t->columns) {
      out->push_back('\t');
      AppendValue(out, c, r);
    }
    EndLine(out, start, 1 + t->columns.size());
  }
  return OkStatus();
}

}  // namespace omicsfs::text
