#!/usr/bin/env bash
# Installs the benchmark's peers (bench/setup.sh), then runs the eager benchmark through dynrepl.
# Usage: bash bench/run.sh [--quick] [--json FILE]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/build/repl/dynrepl"

if [ ! -x "$bin" ]; then
  echo "error: $bin not found; build dynrepl first with scripts/build.sh, then re-run bash bench/run.sh" >&2
  exit 1
fi

bash "$root/bench/setup.sh"
exec "$bin" "$root/bench/bench_eager.py" "$@"
