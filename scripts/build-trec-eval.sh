#!/usr/bin/env bash
# Build a trec_eval binary from a trec_eval source tree (NIST's usnistgov/trec_eval, e.g. a
# checkout of tag v10.0 or v9.0.8), for the differential test and the benchmarks:
#
#   scripts/build-trec-eval.sh SOURCE_DIR [OUTPUT]      (OUTPUT defaults to ./trec_eval)
#   TREC_EVAL_CFLAGS="-O2 -g" scripts/build-trec-eval.sh SOURCE_DIR OUTPUT
#
# The sources are copied to a temporary directory (the tree is left untouched) and compiled
# with its own Makefile, CFLAGS replaced by "$TREC_EVAL_CFLAGS -I. -DVERSIONID=..." (default
# -O3, as the benchmarks compare against). Then, e.g.:
#   WORKBENCH_TREC_EVAL=$PWD/trec_eval python3 -m pytest tests/metrics/test_differential_trec_eval.py
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ ! -f "$1/Makefile" ] || [ ! -f "$1/trec_eval.c" ]; then
  echo "usage: $0 SOURCE_DIR [OUTPUT]   (SOURCE_DIR: a trec_eval tree with Makefile and trec_eval.c)" >&2
  exit 2
fi
SOURCE=$(cd "$1" && pwd)
OUTPUT=${2:-trec_eval}
CFLAGS_CHOSEN=${TREC_EVAL_CFLAGS:--O3}
CC=${CC:-gcc}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -R "$SOURCE"/. "$WORK"
rm -f "$WORK/trec_eval"
make -s -C "$WORK" trec_eval CC="$CC" \
  CFLAGS="$CFLAGS_CHOSEN -I. -Wall -DVERSIONID=\\\"\$(VERSIONID)\\\"" >&2
mkdir -p "$(dirname "$OUTPUT")"
cp "$WORK/trec_eval" "$OUTPUT"
echo "built $OUTPUT ($("$OUTPUT" -v 2>&1 | head -n 1); CFLAGS $CFLAGS_CHOSEN)"
