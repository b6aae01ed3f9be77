"""The command line and the loop shared by the trace-once fuzzers (python_state.py, train_state.py)."""
import argparse
import sys


def main(run_program, script, default_programs, describe="its source"):
    """run_program(index, seed, verify, show) -> (problems, lifted hits, compiled calls, compiled
    function). Runs the programs, prints each failure with the command that reruns it, and exits 1
    on any failure."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=default_programs)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verify", action="store_true", help="verify mode: check each lifted hit against the body")
    ap.add_argument("--one", type=int, default=None, help=f"run only program K and show {describe}")
    ap.add_argument("--why", action="store_true", help="count the reasons entries stay on tier 1")
    args = ap.parse_args(sys.argv[1:])
    indices = [args.one] if args.one is not None else range(args.programs)
    failed, lifted, calls, why = [], 0, 0, {}
    for i in indices:
        problems, hits, n, compiled = run_program(i, args.seed, args.verify, show=args.one is not None)
        lifted, calls = lifted + hits, calls + n
        if args.why:
            for _, reason, _ in compiled.why_python():
                why[reason] = why.get(reason, 0) + 1
        if problems:
            failed.append(i)
            print(f"FAIL program {i} (seed {args.seed}): {problems[0]}")
            print(f"  rerun: build/repl/dynrepl --batch tests/fuzz/{script} --seed {args.seed} --one {i}")
    print(f"{calls} compiled calls, {lifted} served without the body" + (" (verified against it)" if args.verify
                                                                          else ""))
    for reason, n in sorted(why.items(), key=lambda x: -x[1]):
        print(f"  {n:5d} entries on tier 1: {reason}")
    print(f"{len(indices) - len(failed)} programs passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)
