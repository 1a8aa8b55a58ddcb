#include "text/number_format.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

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

// Java's Double.toString (JDK 19 and later) picks, for a double v, the decimal that is shortest
// among those that round to v (closest to v on a tie of length, then the even one); when that is
// a single digit it picks the closest decimal of one or two digits. This is the Schubfach
// algorithm (R. Giulietti, "The Schubfach way to render doubles", 2020), written here from its
// description: v = c·2^q is scaled by a 126-bit approximation g of 10^-k (from a table built once
// with exact integer arithmetic), which brackets v and the ends of its rounding interval
// precisely enough to decide between the candidates s·10^k and (s+1)·10^k, and their multiples of
// ten. Checked against a std::to_chars-based reference on every corpus value and ~50 M random
// doubles (tests/text/java_double_test.cc).
constexpr int kQMin = -1074;  // exponent of the smallest subnormal
constexpr uint64_t kCMin = uint64_t{1} << 52;
constexpr int kKMin = -324, kKMax = 292;  // range of k = floor(log10(v)) - ...

// floor(q·log10(2)), floor(log10(3/4·2^q)), floor(e·log2(10)): exact for the ranges used here.
constexpr int FloorLog10Pow2(int q) { return static_cast<int>((int64_t{q} * 661971961083LL) >> 41); }
constexpr int FloorLog10ThreeQuartersPow2(int q) {
  return static_cast<int>((int64_t{q} * 661971961083LL - 274743187321LL) >> 41);
}
constexpr int FloorLog2Pow10(int e) { return static_cast<int>((int64_t{e} * 913124641741LL) >> 38); }

__extension__ typedef unsigned __int128 U128;

// g(k) = floor(10^-k · 2^(125 - floor(log2(10^-k)))) + 1, in [2^125, 2^126): split as 63 + 63 bits.
struct PowerTable {
  uint64_t g1[kKMax - kKMin + 1];
  uint64_t g0[kKMax - kKMin + 1];

  PowerTable() {
    for (int k = kKMin; k <= kKMax; ++k) {
      const int e = -k;
      const int shift = 125 - FloorLog2Pow10(e);  // x = 10^e · 2^shift
      std::vector<uint32_t> n{1};                 // a little-endian big integer
      auto mul_small = [&n](uint32_t m) {
        uint64_t carry = 0;
        for (auto& w : n) {
          const uint64_t x = uint64_t{w} * m + carry;
          w = static_cast<uint32_t>(x);
          carry = x >> 32;
        }
        if (carry) n.push_back(static_cast<uint32_t>(carry));
      };
      auto div_small = [&n](uint32_t d) {  // floor division
        uint64_t rem = 0;
        for (size_t i = n.size(); i-- > 0;) {
          const uint64_t x = (rem << 32) | n[i];
          n[i] = static_cast<uint32_t>(x / d);
          rem = x % d;
        }
        while (n.size() > 1 && n.back() == 0) n.pop_back();
      };
      auto shift_left = [&n](int bits) {
        n.insert(n.begin(), static_cast<size_t>(bits / 32), 0u);
        if (bits % 32) {
          uint32_t carry = 0;
          for (auto& w : n) {
            const uint32_t next = w >> (32 - bits % 32);
            w = (w << (bits % 32)) | carry;
            carry = next;
          }
          if (carry) n.push_back(carry);
        }
      };
      if (e >= 0) {
        for (int i = 0; i < e; ++i) mul_small(10);
        if (shift >= 0) shift_left(shift);
      } else {
        shift_left(shift);
        for (int i = 0; i < -e; ++i) div_small(10);  // floor(floor(a/10)/10) = floor(a/100)
      }
      // Take floor(n · 2^min(shift, 0)) as a 128-bit number.
      const int right = shift < 0 && e >= 0 ? -shift : 0;
      U128 g = 0;
      for (int bit = 127; bit >= 0; --bit) {
        const int src = bit + right;
        const size_t word = static_cast<size_t>(src / 32);
        const uint32_t b = word < n.size() ? (n[word] >> (src % 32)) & 1 : 0;
        g = (g << 1) | b;
      }
      g += 1;
      g1[k - kKMin] = static_cast<uint64_t>(g >> 63);
      g0[k - kKMin] = static_cast<uint64_t>(g) & ((uint64_t{1} << 63) - 1);
    }
  }
};

const PowerTable& Powers() {
  static const PowerTable table;
  return table;
}

// Round-to-odd of (g1·2^63 + g0)·cp / 2^126 (the scaled value, with a sticky last bit).
inline uint64_t ScaledRoundOdd(uint64_t g1, uint64_t g0, uint64_t cp) {
  const uint64_t x1 = static_cast<uint64_t>((U128{g0} * cp) >> 64);
  const U128 y = U128{g1} * cp;
  const uint64_t y0 = static_cast<uint64_t>(y), y1 = static_cast<uint64_t>(y >> 64);
  const uint64_t z = (y0 >> 1) + x1;
  const uint64_t vbp = y1 + (z >> 63);
  const uint64_t mask63 = (uint64_t{1} << 63) - 1;
  return vbp | (((z & mask63) + mask63) >> 63);
}

// The decimal f·10^e (f may end in zeros) Java prints for v = c·2^q (c > 0).
inline void JavaDecimal(int q, uint64_t c, int dk, uint64_t* f, int* e) {
  const uint64_t out = c & 1;  // an even c includes the ends of its rounding interval
  const uint64_t cb = c << 2, cbr = cb + 2;
  uint64_t cbl;
  int k;
  if (c != kCMin || q == kQMin) {
    cbl = cb - 2;
    k = FloorLog10Pow2(q);
  } else {  // a power of two: the interval below is half as wide
    cbl = cb - 1;
    k = FloorLog10ThreeQuartersPow2(q);
  }
  const int h = q + FloorLog2Pow10(-k) + 2;
  const PowerTable& t = Powers();
  const uint64_t g1 = t.g1[k - kKMin], g0 = t.g0[k - kKMin];
  const uint64_t vb = ScaledRoundOdd(g1, g0, cb << h);
  const uint64_t vbl = ScaledRoundOdd(g1, g0, cbl << h);
  const uint64_t vbr = ScaledRoundOdd(g1, g0, cbr << h);
  const uint64_t s = vb >> 2;
  // Both candidates computed and chosen without branches: for arbitrary values which one wins
  // is unpredictable, and a mispredicted branch cost more than the arithmetic.
  const uint64_t sp10 = 10 * (s / 10), tp10 = sp10 + 10;
  const bool upin = vbl + out <= sp10 << 2;
  const bool wpin = (tp10 << 2) + out <= vbr;
  const bool use_short = (s >= 100) & (upin != wpin);  // one digit fewer: exactly one candidate
  const uint64_t tt = s + 1;
  const bool uin = vbl + out <= s << 2;
  const bool win = (tt << 2) + out <= vbr;
  const int64_t cmp = static_cast<int64_t>(vb - ((s + tt) << 1));  // closer one; even on a tie
  const bool pick_s = uin != win ? uin : (cmp < 0) | ((cmp == 0) & ((s & 1) == 0));
  const uint64_t long_f = pick_s ? s : tt;
  const uint64_t short_f = upin ? sp10 : tp10;
  *f = use_short ? short_f : long_f;
  *e = use_short ? k : k + dk;
}

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline uint64_t Pair(uint32_t x) {  // two digits of x < 100, as two bytes
  uint16_t v;
  std::memcpy(&v, kDigitPairs + 2 * x, 2);
  return v;
}

// The eight digits of x (< 10^8), zero-padded, in memory order, as one 64-bit word: four
// independent pairs, one store.
inline uint64_t Digits8(uint32_t x) {
  const uint32_t a = x / 10000, b = x % 10000;
  return Pair(a / 100) | Pair(a % 100) << 16 | Pair(b / 100) << 32 | Pair(b % 100) << 48;
}

constexpr uint64_t kPow10[20] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
                                 100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
                                 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
                                 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
                                 1000000000000000000ULL, 10000000000000000000ULL};

// Number of decimal digits of f (f > 0): from its bit length, then one comparison.
inline int DigitCount(uint64_t f) {
  const int bits = 64 - __builtin_clzll(f);
  const int n = (bits * 1233) >> 12;  // floor(bits·log10(2)), within one of the answer
  return n + (f >= kPow10[n]);
}

// The decimal f·10^e (f may end in zeros) Java prints for the finite non-zero double of these
// exponent and fraction fields.
inline void ShortestDecimal(int biased, uint64_t frac, uint64_t* f, int* e) {
  *e = 0;
  if (biased != 0) {
    const int mq = -kQMin + 1 - biased;  // v = c·2^-mq
    const uint64_t c = kCMin | frac;
    const bool small_int = (static_cast<unsigned>(mq - 1) < 52u) & ((c & ((uint64_t{1} << (mq & 63)) - 1)) == 0);
    if (small_int) {  // an integer below 2^53: itself
      *f = c >> mq;
    } else {
      JavaDecimal(-mq, c, 0, f, e);
    }
  } else if (frac < 3) {  // the two smallest subnormals: one more digit of precision
    JavaDecimal(kQMin, 10 * frac, -1, f, e);
  } else {
    JavaDecimal(kQMin, frac, 0, f, e);
  }
}

}  // namespace

size_t JavaDoubleLength(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const size_t sign = bits >> 63;
  if (biased == 0x7ff) return frac != 0 ? 3 : 8 + sign;  // NaN, [-]Infinity
  if (biased == 0 && frac == 0) return 3 + sign;         // [-]0.0
  uint64_t f = 0;
  int e = 0;
  ShortestDecimal(biased, frac, &f, &e);
  const int n = DigitCount(f);
  const int exponent = e + n - 1;
  int sig = n;  // digits printed: without trailing zeros
  for (uint64_t t = f; sig > 1 && t % 10 == 0; t /= 10) --sig;
  if (exponent >= -3 && exponent < 7) {
    if (exponent < 0) return sign + 2 + static_cast<size_t>(-exponent - 1 + sig);  // 0.000ddd
    const int int_digits = exponent + 1;
    return sign + static_cast<size_t>(sig <= int_digits ? int_digits + 2 : sig + 1);
  }
  const unsigned x = static_cast<unsigned>(exponent < 0 ? -exponent : exponent);
  return sign + static_cast<size_t>(sig > 1 ? sig + 1 : 3) + 1 + (exponent < 0) + (x >= 100 ? 3 : x >= 10 ? 2 : 1);
}

char* WriteJavaDouble(char* p, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased == 0x7ff) {
    if (frac != 0) return std::copy_n("NaN", 3, p);
    return (bits >> 63) ? std::copy_n("-Infinity", 9, p) : std::copy_n("Infinity", 8, p);
  }
  if (biased == 0 && frac == 0) return (bits >> 63) ? std::copy_n("-0.0", 4, p) : std::copy_n("0.0", 3, p);
  *p = '-';
  p += bits >> 63;
  uint64_t f = 0;
  int e = 0;
  ShortestDecimal(biased, frac, &f, &e);
  // The digits of f right-aligned in buf[0, 24), zeros after: read with fixed-size copies only
  // (variable-length copies and loops over digits were mispredicted branches, per value).
  char buf[48];
  const uint64_t w0 = Digits8(static_cast<uint32_t>(f / 10000000000000000ULL));
  const uint64_t w1 = Digits8(static_cast<uint32_t>((f / 100000000) % 100000000));
  const uint64_t w2 = Digits8(static_cast<uint32_t>(f % 100000000));
  std::memcpy(buf, &w0, 8);
  std::memcpy(buf + 8, &w1, 8);
  std::memcpy(buf + 16, &w2, 8);
  std::memcpy(buf + 24, "000000000000000000000000", 24);
  const int n = DigitCount(f);
  const char* d = buf + 24 - n;
  const int exponent = e + n - 1;  // v ≈ d.ddd·10^exponent
  int sig = n;
  while (sig > 1 && d[sig - 1] == '0') --sig;
  if (exponent >= -3 && exponent < 7) {  // 10^-3 <= |v| < 10^7: plain notation
    // One path for every exponent, without branches: the digits are preceded by zeros in buf
    // (f zero-padded to 24 digits) and followed by zeros, so with k = exponent + 1 the integer
    // part is the max(k, 1) characters before d + k, the fraction the max(sig - k, 1) from it:
    // 0.00ddd, 0.ddd, d.ddd, ddd.0 alike.
    const int k = exponent + 1;
    const int int_len = std::max(k, 1), frac_len = std::max(sig - k, 1);
    std::memcpy(p, d + k - int_len, 8);
    p[int_len] = '.';
    std::memcpy(p + int_len + 1, d + k, 20);  // a fraction has at most 19 characters
    return p + int_len + 1 + frac_len;
  }
  p[0] = d[0];
  p[1] = '.';
  std::memcpy(p + 2, d + 1, 16);
  p += sig > 1 ? sig + 1 : 3;  // at least one digit after the point: "1.0E10"
  *p++ = 'E';
  if (exponent < 0) *p++ = '-';
  const unsigned x = static_cast<unsigned>(exponent < 0 ? -exponent : exponent);  // 1..324
  if (x >= 100) *p++ = static_cast<char>('0' + x / 100);
  if (x >= 10) {
    std::memcpy(p, kDigitPairs + 2 * (x % 100), 2);
    return p + 2;
  }
  *p++ = static_cast<char>('0' + x);
  return p;
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
