#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 2m).
# Go keeps any failing input under the package's testdata/fuzz/<Target>/, which
# is committed so that it runs as a regression case in every `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-2m}"
targets=$(grep -rl --include='*_test.go' '^func Fuzz' . | sort)
total=0 failed=0
for file in $targets; do
  pkg="./$(dirname "${file#./}")"
  for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
    total=$((total + 1))
    echo "== fuzz $pkg $name for $fuzztime"
    if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"; then
      failed=$((failed + 1))
      echo "!! $pkg $name found a failure (see $pkg/testdata/fuzz/$name)"
    fi
  done
done
echo "fuzz: $((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
