// All analytics kernels (brief §7). Each has a sequential reference in tests/util/analytics_verify.h.
#pragma once

#include "analytics/bfs.h"
#include "analytics/cdlp.h"
#include "analytics/common.h"
#include "analytics/khop.h"
#include "analytics/pagerank.h"
#include "analytics/scan.h"
#include "analytics/sssp.h"
#include "analytics/triangles.h"
#include "analytics/wcc.h"
