#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 2m).
# Go keeps any failing input under the package's testdata/fuzz/<Target>/, which
# is committed so that it runs as a regression case in every `go test`.
# FUZZMINIMIZETIME (default 5s) bounds the minimising of each new input: Go
# minimises every input that finds new coverage, for up to 60s by default, so
# a target whose inputs are slow (FuzzMatcherRisk runs the reference model
# too) spent its FUZZTIME minimising: 17 inputs run in 90s, 1,523 with 5s.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-2m}"
minimizetime="${2:-5s}"
targets=$(grep -rl --include='*_test.go' '^func Fuzz' . | sort)
total=0 failed=0
for file in $targets; do
  pkg="./$(dirname "${file#./}")"
  for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
    total=$((total + 1))
    echo "== fuzz $pkg $name for $fuzztime"
    if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimizetime" "$pkg"; then
      failed=$((failed + 1))
      echo "!! $pkg $name found a failure (see $pkg/testdata/fuzz/$name)"
    fi
  done
done
echo "fuzz: $((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
