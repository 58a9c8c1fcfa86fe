// ASSERT_OK(expr): a fatal test failure naming the expression and the Status when expr is not OK.
#pragma once

#include <gtest/gtest.h>

#include "strata/status.h"

#define ASSERT_OK(expr)                                                     \
  do {                                                                      \
    const ::strata::Status _s = (expr);                                     \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.ToString();                 \
  } while (0)
