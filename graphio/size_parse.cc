#include "graphio/size_parse.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace strata::graphio {

namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Status BadSize(std::string_view text, std::string_view why) {
  std::string m = "invalid size '";
  m.append(text);
  m += "': ";
  m.append(why);
  m += " (expected <number>[K|M|G|T|P|E][i][B], e.g. 512M, 64MiB, 1G, 1024)";
  return Status::InvalidArgument(m);
}

// Multiplier of a unit suffix (already lower-cased, blanks removed); 0 if unknown.
uint64_t UnitMultiplier(std::string_view u) {
  if (u.empty() || u == "b") return 1;
  static constexpr char kPrefixes[] = "kmgtpe";
  size_t power = 0;
  for (; power < 6; power++) {
    if (u[0] == kPrefixes[power]) break;
  }
  if (power == 6) return 0;
  std::string_view rest = u.substr(1);
  uint64_t binary = uint64_t{1} << (10 * (power + 1));
  if (rest.empty() || rest == "i" || rest == "ib") return binary;
  if (rest == "b") {
    uint64_t decimal = 1;
    for (size_t i = 0; i <= power; i++) decimal *= 1000;
    return decimal;
  }
  return 0;
}

}  // namespace

Status ParseSize(std::string_view text, uint64_t* bytes) {
  size_t b = 0, e = text.size();
  while (b < e && IsBlank(text[b])) b++;
  while (e > b && IsBlank(text[e - 1])) e--;
  std::string_view t = text.substr(b, e - b);
  if (t.empty()) return BadSize(text, "empty");

  // Integer part, exact.
  size_t i = 0;
  uint64_t whole = 0;
  bool overflow = false;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
    uint64_t d = static_cast<uint64_t>(t[i] - '0');
    if (whole > (UINT64_MAX - d) / 10) overflow = true;
    whole = whole * 10 + d;
    i++;
  }
  size_t int_digits = i;
  // Fraction part, as a double in [0, 1).
  double fraction = 0.0;
  size_t frac_digits = 0;
  if (i < t.size() && t[i] == '.') {
    i++;
    double scale = 0.1;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      fraction += (t[i] - '0') * scale;
      scale /= 10;
      frac_digits++;
      i++;
    }
    if (frac_digits == 0) return BadSize(text, "no digits after '.'");
  }
  if (int_digits == 0 && frac_digits == 0) return BadSize(text, "no number");
  if (overflow) return BadSize(text, "does not fit in 64 bits");

  while (i < t.size() && IsBlank(t[i])) i++;
  std::string unit;
  for (; i < t.size(); i++) {
    unsigned char c = static_cast<unsigned char>(t[i]);
    if (!std::isalpha(c)) return BadSize(text, "unexpected character in unit");
    unit.push_back(static_cast<char>(std::tolower(c)));
  }
  uint64_t mult = UnitMultiplier(unit);
  if (mult == 0) return BadSize(text, "unknown unit '" + unit + "'");
  if (frac_digits > 0 && mult == 1) return BadSize(text, "a fraction of a byte");

  uint64_t result;
  if (__builtin_mul_overflow(whole, mult, &result)) {
    return BadSize(text, "does not fit in 64 bits");
  }
  if (frac_digits > 0) {
    // fraction * mult < mult <= 2^60, exactly representable range for the floor we need.
    double extra = std::floor(fraction * static_cast<double>(mult));
    if (__builtin_add_overflow(result, static_cast<uint64_t>(extra), &result)) {
      return BadSize(text, "does not fit in 64 bits");
    }
  }
  *bytes = result;
  return Status::OK();
}

std::string FormatSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (u < 6 && bytes >= (uint64_t{1} << (10 * (u + 1)))) u++;
  char buf[48];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    uint64_t unit = uint64_t{1} << (10 * u);
    if (bytes % unit == 0) {
      std::snprintf(buf, sizeof(buf), "%llu %s", static_cast<unsigned long long>(bytes / unit),
                    kUnits[u]);
    } else {
      std::snprintf(buf, sizeof(buf), "%.1f %s",
                    static_cast<double>(bytes) / static_cast<double>(unit), kUnits[u]);
    }
  }
  return buf;
}

}  // namespace strata::graphio
