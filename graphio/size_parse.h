// Byte sizes on the command line: "512M", "64MiB", "1G", "1.5GiB", "1024".
//
// Grammar (case-insensitive, surrounding blanks ignored):
//   size   := number [blank*] [unit]
//   number := digits [ "." digits ]        (a fraction needs a unit other than bytes)
//   unit   := "B" | P | P "i" | P "iB" | P "B"      with P one of K M G T P E
// P, Pi and PiB are binary (K = 1024, M = 1024^2, ...), following dd(1) and most storage tools;
// PB is decimal (KB = 1000, MB = 1000^2, ...). A fraction is rounded down to whole bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "strata/status.h"

namespace strata::graphio {

// Sets *bytes and returns OK, or returns InvalidArgument naming `text` (bad syntax, unknown
// unit, or a value that does not fit in 64 bits). *bytes is untouched on error.
Status ParseSize(std::string_view text, uint64_t* bytes);

// Human-readable binary size for reports: "512 B", "64 MiB", "1.5 GiB". Exact multiples print
// without a fraction; other values print one decimal (rounded).
std::string FormatSize(uint64_t bytes);

}  // namespace strata::graphio
