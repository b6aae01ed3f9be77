-i --no-color --events /tmp/dynrepl_golden_events.jsonl scripts/examples/recompiles.py
import json
evs = [json.loads(line) for line in open("/tmp/dynrepl_golden_events.jsonl")]
[e["kind"] for e in evs if e["kind"] != "cache_hit"]
all({"kind", "fn", "entry", "segment", "file", "line", "reason"} <= set(e) for e in evs)
[e["kind"] for e in evs if e["kind"] != "cache_hit"] == [e["kind"] for e in dyn.debug.events() if e["kind"] != "cache_hit"]
[(e["fn"], e["count"]) for e in evs if e["kind"] == "cache_hit"]
[(e["fn"], e["entry"], e["line"], e["source"]) for e in evs if e["kind"] == "recompile"]
[(f["entry"], f["guard"], f["expected"], f["actual"]) for e in evs if e["kind"] == "recompile" for f in e["failures"]]
