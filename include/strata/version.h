// The library's version: major.minor.patch. The store file formats carry their own versions
// (docs/file-format.md); this one names the code.
#pragma once

#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 1
#define STRATA_VERSION_PATCH 0
#define STRATA_VERSION_STRING "0.1.0"
