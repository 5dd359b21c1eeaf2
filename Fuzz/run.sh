#!/usr/bin/env bash
# Builds the libFuzzer targets (in .build-fuzz, every Swift module with -sanitize=fuzzer) and runs
# each one: first on its saved regressions, then for FUZZ_SECONDS on a copy of its seed corpus.
# A crash leaves its input in test-artifacts/fuzz/ and fails the run; add that input to
# Fuzz/Regressions/<target>/ and a unit test for the fix.
#   FUZZ_SECONDS=12 bash Fuzz/run.sh            (make test: about a minute in all)
#   FUZZ_SECONDS=600 bash Fuzz/run.sh FuzzFilter (make fuzz: longer, or one target)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-12}
TARGETS=${*:-FuzzJSON FuzzJSONRPC FuzzFilter FuzzArguments FuzzCalculation FuzzWorkflow}
SWIFT=${SWIFT:-swift}
BUILD=.build-fuzz
OUT=test-artifacts/fuzz
mkdir -p "$OUT"
for target in $TARGETS; do
  # A target that does not build (its harness behind an API change) fails the run here, saying so,
  # rather than leaving an old binary to run.
  if ! PORTICO_FUZZ=1 $SWIFT build --scratch-path "$BUILD" -Xswiftc -sanitize=fuzzer --product "$target" > "$OUT/$target-build.log" 2>&1; then
    echo "$target does not build:"
    grep -E "error:" "$OUT/$target-build.log" | head -10
    exit 1
  fi
  grep -E "warning:|Build of" "$OUT/$target-build.log" | grep -v "unhandled; explicitly declare" | head -5 || true
done
BIN=$(PORTICO_FUZZ=1 $SWIFT build --scratch-path "$BUILD" --show-bin-path)
status=0
for target in $TARGETS; do
  regressions=$(find "Fuzz/Regressions/$target" -type f ! -name .keep | sort)
  if [ -n "$regressions" ]; then
    echo "== $target: $(echo "$regressions" | wc -l) regression inputs"
    # shellcheck disable=SC2086
    "$BIN/$target" -runs=1 $regressions > "$OUT/$target-regressions.log" 2>&1 || { echo "$target failed a regression input:"; tail -20 "$OUT/$target-regressions.log"; status=1; }
  fi
  work=$(mktemp -d)
  cp -r "Fuzz/Corpus/$target/." "$work/"
  echo "== $target: fuzzing for ${SECONDS_EACH}s"
  if ! "$BIN/$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
      -artifact_prefix="$OUT/$target-" "$work" > "$OUT/$target.log" 2>&1; then
    echo "$target found a failure; input saved under $OUT/:"
    grep -E "Fatal error|ERROR|SUMMARY|Test unit written" "$OUT/$target.log" | head -10
    status=1
  fi
  grep -E "stat::number_of_executed_units|cov: " "$OUT/$target.log" | tail -2 | sed "s/^/   /"
  rm -rf "$work"
done
exit $status
