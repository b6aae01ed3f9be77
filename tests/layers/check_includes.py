"""Fails when an #include points up the layers (docs/architecture.md).

base <- ops <- ir <- capture <- autograd <- dispatch <- api <- query <- viz <- python <- repl

A file may include its own layer and any layer below. viz/ and repl/ see the engine only
through core/query (plus base and the ir's data types, which the query hands out).
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ORDER = ["base", "ops", "ir", "capture", "autograd", "dispatch", "api", "query", "viz", "python", "repl"]
RANK = {name: i for i, name in enumerate(ORDER)}
# What the front ends (viz, repl) may include from core.
FRONT_END_ALLOWED = {"base", "ir", "query"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """The layer of a project path ("core/ops/run.h"), or None for files outside the layers."""
    parts = path.split("/")
    if parts[0] == "core":
        if len(parts) == 2:
            return "base"
        return parts[1] if parts[1] in RANK else None
    if parts[0] in ("viz", "python", "repl"):
        return parts[0]
    return None


def check(root=ROOT):
    problems = []
    checked = 0
    for top in ("core", "viz", "python", "repl"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".h", ".cpp", ".def")):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                mine = layer_of(rel)
                if mine is None:
                    problems.append(f"{rel}: in no layer; add its folder to ORDER in {__file__}")
                    continue
                checked += 1
                with open(full, encoding="utf-8") as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        theirs = layer_of(target)
                        if theirs is None:
                            continue  # a system or third-party header
                        if RANK[theirs] > RANK[mine]:
                            problems.append(f"{rel}:{n}: includes {target} ({theirs}), above its own layer ({mine})")
                        elif mine in ("viz", "repl") and theirs not in FRONT_END_ALLOWED | {"viz", "python", "repl"}:
                            problems.append(f"{rel}:{n}: includes {target} ({theirs}); {mine}/ reads the engine "
                                            "through core/query only")
    return checked, problems


def main():
    checked, problems = check()
    for p in problems:
        print(p)
    print(f"{checked} files checked, {len(problems)} upward includes")
    return 1 if problems or checked < 50 else 0


if __name__ == "__main__":
    sys.exit(main())
