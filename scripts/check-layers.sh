#!/usr/bin/env bash
# Fails if a folder includes a header from a folder it may not use. The layers, lowest first
# (docs/architecture.md): a folder may include only the folders listed for it, its own files,
# and the public API in include/strata/. CMake's link lines (CMakeLists.txt) say the same.
set -euo pipefail
cd "$(dirname "$0")/.."

# analytics/ is private to the kernels: everything outside it (the CLI, the benchmarks) uses
# the public include/strata/analytics.h (tests, not checked here, may test its internals).
declare -A ALLOWED=(
  [util]=""
  [io]="util"
  [mvcc]="util"
  [memgraph]="util mvcc"
  [segment]="util io"
  [index]="util io segment"
  [compaction]="util io segment index mvcc memgraph"
  [db]="util io segment index compaction mvcc memgraph"
  [analytics]="util"
  [graphio]="util io"
  [tools]="util io db graphio"
  [bench]="util io segment index compaction mvcc memgraph db graphio"
  [examples]=""  # case studies: the public API (include/strata/) only
)

status=0
for folder in "${!ALLOWED[@]}"; do
  [ -d "$folder" ] || { echo "check-layers: folder $folder is missing"; status=1; continue; }
  allowed=" $folder strata ${ALLOWED[$folder]} "
  while IFS= read -r line; do
    file=${line%%:*}
    target=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$line")
    top=${target%%/*}
    if [ "$top" = "$target" ]; then
      echo "check-layers: $file includes \"$target\" without a folder"
      status=1
    elif [[ "$allowed" != *" $top "* ]]; then
      echo "check-layers: $file includes \"$target\": $folder may not use $top/"
      status=1
    fi
  done < <(grep -HE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$folder"/*.h "$folder"/*.cc 2>/dev/null || true)
done

# Every folder with code must be listed above, so a new folder cannot escape the check.
for dir in */; do
  dir=${dir%/}
  case "$dir" in include|tests|docs|scripts|python|build*|bench-out|demo-data) continue ;; esac
  if compgen -G "$dir/*.h" >/dev/null || compgen -G "$dir/*.cc" >/dev/null; then :; else continue; fi
  if [ -z "${ALLOWED[$dir]+x}" ]; then
    echo "check-layers: folder $dir/ has code but no place in the layers (scripts/check-layers.sh)"
    status=1
  fi
done

if [ $status -eq 0 ]; then echo "check-layers: every folder uses only the folders below it"; fi
exit $status
