#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined) and runs each for a
# number of inputs from a small seed corpus; CTest runs it with a fixed seed (fuzz.libfuzzer).
#   tests/fuzz/libfuzzer/run.sh [--runs N] [--seed S] [--out DIR]
# A failing input is kept in DIR/<target>/crash-* and the script exits non-zero; reproduce with
# DIR/<target>/fuzz_<target> DIR/<target>/crash-*.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
runs=20000
seed=1
out="${TMPDIR:-/tmp}/dyn-libfuzzer"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="${2:?--runs needs a count}"; shift 2 ;;
    --seed) seed="${2:?--seed needs a number}"; shift 2 ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--seed S] [--out DIR]" >&2; exit 2 ;;
  esac
done
command -v clang++ >/dev/null || { echo "libfuzzer: clang++ is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$root")
declare -A sources=(
  [text]="$here/fuzz_text.cpp $root/repl/text.cpp"
  [options]="$here/fuzz_options.cpp $root/repl/options.cpp $root/repl/write_file.cpp $root/repl/text.cpp"
)
declare -A libs=([text]="-lfmt" [options]="-lfmt -lboost_program_options")
# Seeds: inputs near the interesting edges, so a short run reaches them.
declare -A seeds=(
  [text]=$'plain\ncaf\xc3\xa9 \xe2\x80\x8b zw\n\xed\xa0\x80 surrogate\n\xf4\x90\x80\x80 too big\n\xc0\xaf overlong\n\x1b[31m esc'
  [options]=$'--batch\0-e\0print(1)\0x.py\n--event-limit\x0012\0--report\0r.html\0s.py\n-c\0pass\0--\0a\n-i\0--pm\0--break\0recompile:f\n--x%canonical_option%\0--events\0%value%'
)
status=0
for t in text options; do
  dir="$out/$t"
  mkdir -p "$dir/corpus"
  i=0
  while IFS= read -r line; do printf '%s' "$line" > "$dir/corpus/seed$i"; i=$((i + 1)); done <<< "${seeds[$t]}"
  # shellcheck disable=SC2086
  clang++ "${flags[@]}" ${sources[$t]} -o "$dir/fuzz_$t" ${libs[$t]}
  echo "libfuzzer: $t, $runs runs, seed $seed"
  if ! (cd "$dir" && "./fuzz_$t" -runs="$runs" -seed="$seed" -max_len=512 -print_final_stats=1 corpus \
          > "$dir/log.txt" 2>&1); then
    echo "libfuzzer: $t FAILED; log: $dir/log.txt" >&2
    tail -n 30 "$dir/log.txt" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|Done" "$dir/log.txt" | tail -n 2
  fi
done
exit $status
