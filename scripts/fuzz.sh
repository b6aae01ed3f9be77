#!/usr/bin/env bash
# Long runs of the three fuzzers (CTest runs a fixed-seed slice of each):
#   differential  tests/fuzz/random_inplace.py  random programs, eager vs compiled (both backends), bit for bit
#   stale         tests/fuzz/stale_graph.py     random call sequences against one compiled function
#   repl          tests/fuzz/repl_fuzz.py       random and malformed REPL input and command lines
#
#   scripts/fuzz.sh [--programs N] [--seed S] [--minutes M] [--only differential|stale|repl]
#
# --programs N: programs (sequences, sessions) per batch, default 1000 (repl: N/20 sessions).
# --minutes M: batches with seeds S, S+1, ... until M minutes have passed (default: one batch).
# A failing differential batch is run again program by program in child processes, and the
# smallest failure of each kind is reduced to a standalone repro script (--fork --shrink).
# Exit status 1 if any batch failed. Uses the binary in build/ (scripts/build.sh makes it).
set -euo pipefail
cd "$(dirname "$0")/.."

programs=1000 seed=0 minutes=0 only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --programs|--seed|--minutes|--only)
      if [ $# -lt 2 ]; then echo "error: $1 needs a value; see scripts/fuzz.sh --help" >&2; exit 2; fi ;;
  esac
  case "$1" in
    --programs) programs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option '$1' (expected --programs N, --seed S, --minutes M, --only KIND)" >&2; exit 2 ;;
  esac
done
for n in "$programs" "$seed" "$minutes"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "error: --programs, --seed and --minutes take whole numbers, not '$n'" >&2; exit 2; }
done
case "$only" in ""|differential|stale|repl) ;; *)
  echo "error: --only takes differential, stale or repl, not '$only'" >&2; exit 2 ;;
esac

bin=build/repl/dynrepl
[ -x "$bin" ] || { echo "error: no $bin; run scripts/build.sh first" >&2; exit 2; }
export DYNREPL=$PWD/$bin
deadline=$(( $(date +%s) + minutes * 60 ))
failed=0 batches=0
declare -A passed=()

run() {  # run KIND COMMAND...: one batch, its output kept in full; false if it did not pass
  local kind=$1; shift
  local out n ok=0
  out=$(mktemp)
  "$@" > "$out" 2>&1 || ok=1
  tail -1 "$out"
  n=$(grep -E "^[0-9]+ [a-z ]*passed" "$out" | tail -1 | cut -d' ' -f1 || true)
  passed[$kind]=$(( ${passed[$kind]:-0} + ${n:-0} ))
  grep -qE "^[0-9]+ [a-z ]*passed, 0 failed" "$out" || ok=1
  if [ "$ok" -ne 0 ]; then
    failed=1
    echo "fuzz: a $kind batch failed ($*); its output:" >&2
    grep -v "^\s*$" "$out" | tail -60 >&2
  fi
  rm -f "$out"
  return "$ok"
}

while :; do
  if [ -z "$only" ] || [ "$only" = differential ]; then
    for backend in default eager; do
      args=(--batch tests/fuzz/random_inplace.py --programs "$programs" --seed "$seed" --backend "$backend")
      # In one process a crash ends the batch: run it again a program per child, and reduce.
      run "differential($backend)" "$bin" "${args[@]}" || "$bin" "${args[@]}" --fork --shrink || true
    done
  fi
  if [ -z "$only" ] || [ "$only" = stale ]; then
    run stale "$bin" --batch tests/fuzz/stale_graph.py --programs "$programs" --seed "$seed" || true
  fi
  if [ -z "$only" ] || [ "$only" = repl ]; then
    run repl /usr/bin/python3 tests/fuzz/repl_fuzz.py --binary "$bin" -q \
      --sessions $(( programs / 20 > 0 ? programs / 20 : 1 )) --seed "$seed" || true
  fi
  batches=$((batches + 1))
  seed=$((seed + 1))
  [ "$(date +%s)" -lt "$deadline" ] || break
done

summary=""
for k in "${!passed[@]}"; do summary+="$k ${passed[$k]}, "; done
echo "fuzz: $batches batch(es) up to seed $((seed - 1)); passed: ${summary%, }"
exit "$failed"
