"""Reads the reports AddressSanitizer, LeakSanitizer and UBSan wrote under a log directory (the
log_path of ASAN_OPTIONS/UBSAN_OPTIONS that scripts/test.sh --sanitize sets) and fails if any is ours.

Every memory error and every undefined-behaviour report counts: the engine, the bindings and the REPL
are the only instrumented code, so a report always involves them. A leak counts when a frame of its
allocation stack is in our sources: the embedded CPython and numpy keep objects alive until exit on
purpose (interned strings, module state), and those reports, with no frame of ours, are not ours to fix.

Run: /usr/bin/python3 tests/sanitize/check_logs.py LOG_DIR SOURCE_ROOT
Prints every report of ours in full and a summary; exit status 1 if there is one.
"""
import os
import re
import sys

REPORT_START = re.compile(r"^(=+\n)?==\d+==ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:", re.M)


def blocks(text):
    """The leak blocks of a LeakSanitizer report: 'Direct leak of ...' up to the blank line."""
    return [b for b in re.split(r"\n\s*\n", text) if re.match(r"\s*(Direct|Indirect) leak of", b)]


def ours(block, root):
    """Whether a stack frame of the block is a file under root (root/..., not a sibling root-old/)."""
    prefix = os.path.join(root, "")
    return any(prefix in line for line in block.splitlines() if re.match(r"\s*#\d+ ", line))


def main():
    log_dir, root = sys.argv[1], os.path.realpath(sys.argv[2])
    found, files, leaks_theirs = [], 0, 0
    for name in sorted(os.listdir(log_dir)):
        with open(os.path.join(log_dir, name), errors="replace") as fh:
            text = fh.read()
        files += 1
        if "ERROR: AddressSanitizer" in text or "runtime error:" in text:
            found.append((name, text))
            continue
        if "ERROR: LeakSanitizer" in text:
            mine = [b for b in blocks(text) if ours(b, root)]
            leaks_theirs += len(blocks(text)) - len(mine)
            if mine:
                found.append((name, "\n\n".join(mine)))
    for name, text in found:
        print(f"==== {name}\n{text}\n")
    print(f"sanitizers: {files} report files, {len(found)} with errors in our code"
          f" ({leaks_theirs} leak records of the interpreter and numpy alone, ignored)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
