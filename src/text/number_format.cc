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

void AppendJavaDouble(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v < 0 ? "-Infinity" : "Infinity");
    return;
  }
  if (v == 0) {
    out->append(std::signbit(v) ? "-0.0" : "0.0");
    return;
  }
  char buf[64];
  char* end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific).ptr;
  auto parse = [](const char* b, const char* e, std::string* digits, int* exponent) {
    digits->clear();
    const char* q = b;
    if (*q == '-') ++q;
    for (; q < e && *q != 'e'; ++q) {
      if (*q != '.') digits->push_back(*q);
    }
    std::from_chars(q + (q[1] == '+' ? 2 : 1), e, *exponent);
  };
  std::string digits;
  int exponent = 0;
  parse(buf, end, &digits, &exponent);
  if (digits.size() == 1) {
    // Java picks the closest decimal of 1 or 2 digits that still rounds back.
    char two[64];
    char* tend = std::to_chars(two, two + sizeof(two), v, std::chars_format::scientific, 1).ptr;
    double back = 0;
    std::from_chars(two, tend, back);
    if (back == v) {
      std::string d2;
      int e2 = 0;
      parse(two, tend, &d2, &e2);
      while (d2.size() > 1 && d2.back() == '0') d2.pop_back();
      digits = d2;
      exponent = e2;
    }
  }
  if (v < 0) out->push_back('-');
  const double a = std::fabs(v);
  if (a >= 1e-3 && a < 1e7) {
    if (exponent >= 0) {
      const size_t int_digits = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_digits) {
        out->append(digits);
        out->append(int_digits - digits.size(), '0');
        out->append(".0");
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
    return;
  }
  out->push_back(digits[0]);
  out->push_back('.');
  if (digits.size() > 1) out->append(digits, 1); else out->push_back('0');
  out->push_back('E');
  AppendInt(out, exponent);
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
