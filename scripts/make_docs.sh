#!/usr/bin/env bash
# Regenerates the pictures the README shows (docs/*.svg) from the example scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/repl/dynrepl
[ -x "$bin" ] || { echo "error: build first with scripts/build.sh" >&2; exit 1; }
"$bin" --batch -e ':render fn[1] docs/graph-break.svg' scripts/examples/branchy.py > /dev/null
"$bin" --batch -e ':render --diff f[0] f[2] docs/recompile-diff.svg' scripts/examples/recompiles.py > /dev/null
echo "wrote docs/graph-break.svg docs/recompile-diff.svg"
