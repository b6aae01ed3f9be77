#!/usr/bin/env bash
# Installs the benchmark's peers (bench/setup.sh), then runs every benchmark through dynrepl:
# eager ops (bench_eager.py), capture costs (bench_capture.py), replay (bench_replay.py),
# training tokens/s (bench_train.py), the backend (bench_backend.py), a sampling loop under
# dynamic shapes (bench_sampling.py).
# Usage: bash bench/run.sh [--quick] [--json FILE]   (--json applies to the eager benchmark)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/build/repl/dynrepl"

if [ ! -x "$bin" ]; then
  echo "error: $bin not found; build dynrepl first with scripts/build.sh, then re-run bash bench/run.sh" >&2
  exit 1
fi

bash "$root/bench/setup.sh"
quick=()
for a in "$@"; do [ "$a" = "--quick" ] && quick=(--quick); done
"$bin" --real-torch "$root/bench/bench_eager.py" "$@"
echo
"$bin" "$root/bench/bench_capture.py" "${quick[@]}"
echo
"$bin" --real-torch "$root/bench/bench_replay.py" "${quick[@]}"
echo
"$bin" --real-torch "$root/bench/bench_train.py" "${quick[@]}"
echo
"$bin" --real-torch --batch "$root/bench/bench_backend.py" "${quick[@]}"
echo
"$bin" --real-torch --batch "$root/bench/bench_sampling.py" "${quick[@]}"
echo
"$bin" --batch "$root/bench/bench_memory.py" "${quick[@]}"
