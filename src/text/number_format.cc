#include "text/number_format.h"

#include <algorithm>
#include <cmath>

namespace omicsfs::text {

void AppendUInt(std::string* out, uint64_t v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteUInt(buf, v));
}
void AppendInt(std::string* out, int64_t v) {
  char buf[kMaxNumberChars];
  out->append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
}

void AppendVcfFloat(std::string* out, float v) {
  if (std::isnan(v)) {
    out->append(std::signbit(v) ? "-nan" : "nan");
    return;
  }
  if (std::isinf(v)) {
    out->append(v < 0 ? "-inf" : "inf");
    return;
  }
  if (v == 0) {
    out->append(std::signbit(v) ? "-0" : "0");
    return;
  }
  // The shortest round-trip digit count is a lower bound for p.
  char buf[64];
  char* end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific).ptr;
  int p = 0;
  for (char* q = buf; q < end && *q != 'e'; ++q) p += (*q >= '0' && *q <= '9');
  for (;; ++p) {
    end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific, p - 1).ptr;
    float back = 0;
    std::from_chars(buf, end, back);
    if (back == v || p >= 9) break;
  }
  // buf = [-]d[.ddd]e±XX: collect the digits and the exponent.
  const char* q = buf;
  bool negative = *q == '-';
  if (negative) ++q;
  std::string digits;
  for (; *q != 'e'; ++q) {
    if (*q != '.') digits.push_back(*q);
  }
  int exponent = 0;
  std::from_chars(q + (q[1] == '+' ? 2 : 1), end, exponent);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int precision = std::max(6, p);
  if (negative) out->push_back('-');
  if (exponent < -4 || exponent >= precision) {
    out->push_back(digits[0]);
    if (digits.size() > 1) {
      out->push_back('.');
      out->append(digits, 1);
    }
    out->push_back('e');
    out->push_back(exponent < 0 ? '-' : '+');
    int ax = exponent < 0 ? -exponent : exponent;
    if (ax < 10) out->push_back('0');
    AppendUInt(out, static_cast<uint64_t>(ax));
  } else if (exponent >= 0) {
    const size_t int_digits = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= int_digits) {
      out->append(digits);
      out->append(int_digits - digits.size(), '0');
    } else {
      out->append(digits, 0, int_digits);
      out->push_back('.');
      out->append(digits, int_digits);
    }
  } else {
    out->append("0.");
    out->append(static_cast<size_t>(-exponent - 1), '0');
    out->append(digits);
  }
}

namespace {

// Splits std::to_chars scientific output "[-]d[.ddd]e±XX" into its digits and exponent.
int SplitScientific(const char* b, const char* e, char* digits, int* exponent) {
  int n = 0;
  const char* q = b;
  if (*q == '-') ++q;
  for (; q < e && *q != 'e'; ++q) {
    if (*q != '.') digits[n++] = *q;
  }
  ++q;  // 'e'
  const bool negative = *q == '-';
  int x = 0;
  for (++q; q < e; ++q) x = x * 10 + (*q - '0');
  *exponent = negative ? -x : x;
  return n;
}

}  // namespace

char* WriteJavaDouble(char* p, double v) {
  if (std::isnan(v)) return std::copy_n("NaN", 3, p);
  if (std::isinf(v)) return v < 0 ? std::copy_n("-Infinity", 9, p) : std::copy_n("Infinity", 8, p);
  if (v == 0) return std::signbit(v) ? std::copy_n("-0.0", 4, p) : std::copy_n("0.0", 3, p);
  char buf[48];
  char* end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific).ptr;
  char digits[32];
  int exponent = 0;
  int n = SplitScientific(buf, end, digits, &exponent);
  if (n == 1) {
    // Java picks the closest decimal of 1 or 2 digits that still rounds back.
    char two[48];
    char* tend = std::to_chars(two, two + sizeof(two), v, std::chars_format::scientific, 1).ptr;
    double back = 0;
    std::from_chars(two, tend, back);
    if (back == v) {
      n = SplitScientific(two, tend, digits, &exponent);
      while (n > 1 && digits[n - 1] == '0') --n;
    }
  }
  if (v < 0) *p++ = '-';
  const double a = std::fabs(v);
  if (a >= 1e-3 && a < 1e7) {
    if (exponent >= 0) {
      const int int_digits = exponent + 1;
      if (n <= int_digits) {
        p = std::copy_n(digits, n, p);
        p = std::fill_n(p, int_digits - n, '0');
        *p++ = '.';
        *p++ = '0';
      } else {
        p = std::copy_n(digits, int_digits, p);
        *p++ = '.';
        p = std::copy_n(digits + int_digits, n - int_digits, p);
      }
    } else {
      *p++ = '0';
      *p++ = '.';
      p = std::fill_n(p, -exponent - 1, '0');
      p = std::copy_n(digits, n, p);
    }
    return p;
  }
  *p++ = digits[0];
  *p++ = '.';
  if (n > 1) {
    p = std::copy_n(digits + 1, n - 1, p);
  } else {
    *p++ = '0';
  }
  *p++ = 'E';
  return std::to_chars(p, p + 8, exponent).ptr;
}

void AppendJavaDouble(std::string* out, double v) {
  char buf[kMaxJavaDoubleChars];
  out->append(buf, WriteJavaDouble(buf, v));
}

void AppendFloat(std::string* out, float v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteFloat(buf, v));
}
void AppendDouble(std::string* out, double v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteDouble(buf, v));
}

}  // namespace omicsfs::text
