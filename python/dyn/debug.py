"""dyn.debug: what compile regions captured — graphs, graph breaks, events, counters — from Python.

The same records the REPL shows; nothing here keeps its own copy.
"""
import json

import _dyn

from . import _compile


def _fn_name(fn):
    if fn is None:
        return None
    c = _compile.lookup(fn)
    if c is not None:
        return c.name
    if isinstance(fn, str):
        return fn
    raise TypeError(f"expected a compiled function, its original function or its name, got {type(fn).__name__}")


def counters():
    """Counters and times in seconds: calls, compiles, graph_breaks, graphs, trace_s, compile_s, execute_s, ...

    events_dropped: how many old events the bounded history let go (set_event_limit); the other
    counters count every event, dropped or not.
    """
    return _dyn._counters()


def set_event_limit(n):
    """Keep the newest n events in the history (default 10000; 0 keeps every one).

    Older events are dropped from then on; counters still count them, and `dynrepl --events FILE`
    still writes every one as it happens.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_event_limit(n): n must be an int (how many of the newest events to keep; 0 keeps "
                        f"every event), got {type(n).__name__}")
    _dyn._set_event_limit(n)


def event_limit():
    """How many of the newest events the history keeps (0: every one)."""
    return _dyn._event_limit()


def events(kind=None, fn=None):
    """The event log as dicts (kind, fn, entry, segment, file, line, reason, ...), oldest first.

    Only the newest event_limit() events are kept; counters()['events_dropped'] says how many went.
    """
    name = _fn_name(fn)
    return [_event(e) for e in json.loads(_dyn._events())
            if (kind is None or e["kind"] == kind) and (name is None or e["fn"] == name)]


def _event(e):
    """An event as Python code reads it: frames as tuples, a guard failure's fields at the top."""
    e["stack"] = [tuple(f) for f in e["stack"]]
    if e["kind"] == "guard_failure":
        g = e.pop("guard")
        e.update({k: g[k] for k in ("guard", "what", "expected", "actual", "hint", "text")})
    for f in e.get("failures", ()):
        f["stack"] = [tuple(x) for x in f["stack"]]
    return e


class Node:
    """One op of a captured graph."""

    _FIELDS = ("op", "dtype", "shape", "file", "line", "source", "stack", "inputs", "outputs", "args")

    def __init__(self, d):
        for k in self._FIELDS:
            setattr(self, k, d[k])
        self._text = d["text"]

    def __repr__(self):
        return f"<Node {self._text.split('#')[0].strip()}>"


class Graph:
    """A captured graph (one segment of one cache entry): id reads FN[ENTRY].SEGMENT."""

    # inputs: the tensors entering it, each with its source; scalar_inputs: the floats it reads at
    # each call (node, op, kind, name, traced value)
    _FIELDS = ("id", "fn", "entry", "segment", "calls", "inputs", "scalar_inputs")

    def __init__(self, d):
        for k in self._FIELDS:
            setattr(self, k, d[k])
        self.nodes = [Node(n) for n in d["nodes"]]
        self._text = d["text"]
        self._text_verbose = d["text_verbose"]
        self._plan = d["plan"]

    @property
    def ops(self):
        return [n.op for n in self.nodes]

    def text(self, verbose=False):
        """The graph, one node per line, with the user's source line beside each node."""
        return self._text_verbose if verbose else self._text

    def plan(self):
        """The steps the graph runs as (what :graph -v shows under plan:): the passes' log, then one
        line per step (kernel, view, in_place, fused, free). Empty for the eager backend."""
        return self._plan

    def dot(self):
        """The graph as graphviz DOT text."""
        return _dyn._dot(self.id)

    def render(self, format="svg"):
        """The graph drawn by graphviz: 'svg' or 'png' bytes."""
        return _dyn._render(self.id, format)

    def __repr__(self):
        return f"<Graph {self.id}: {len(self.nodes)} ops>"


def graphs(fn=None):
    """Every captured graph (or those of one compiled function), in the order they were compiled."""
    name = _fn_name(fn)
    return [Graph(d) for d in _dyn._graphs() if name is None or d["fn"] == name]


def guards(fn):
    """For each cache entry of fn, its guards: one string per guard, with its source line."""
    c = _compile.lookup(fn)
    if c is None:
        raise TypeError(f"dyn.debug.guards: {fn!r} is not a compiled function (or the name of one)")
    return _dyn._guards(c._state)


def profile(fn=None):
    """Where compiled time goes: one dict per plan step that ran, of every graph (or of fn's newest
    cache entry; fn may also be a graph id like "f[0].1" or an entry like "f[0]"), in graph and step
    order. Each has graph, plan (0 unless calls kept more values alive and ran another plan), step,
    kind (kernel, fused, view, in_place, move, free; node for backend="eager"), what (the step as
    :graph -v prints it), file, line, source, lines (a fused step's lines in that file), runs, and
    seconds (wall time over all runs). Sort by "seconds" for the hottest; :profile shows the same.
    """
    name = _fn_name(fn)
    return _dyn._profile("" if name is None else name)


def reset_profile():
    """Zero every step time (graphs, plans and caches stay): the next calls are timed afresh."""
    _dyn._reset_profile()


def reset():
    """Forget graphs, events, counters, compiled plans and every compiled function's cache."""
    _dyn._reset()  # the engine's reset also runs _compile.forget_definitions


class ExplainOutput:
    """What one fresh call of a compiled function captured."""

    def __init__(self, name, graphs, breaks, guards):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.graph_break_count = len(breaks)
        self.break_reasons = [
            {"reason": b["reason"], "kind": b["break_kind"], "asked_for": b["details"], "file": b["file"],
             "line": b["line"],
             "source": b["source"], "hint": b["hint"]}
            for b in breaks
        ]
        self.ops_per_graph = [g.ops for g in graphs]
        self.op_count = sum(len(o) for o in self.ops_per_graph)
        self.guards = guards
        self._name = name

    def __str__(self):
        lines = [
            f"{self._name}: {self.graph_count} graph(s), {self.graph_break_count} graph break(s), "
            f"{self.op_count} op(s)"
        ]
        for i, b in enumerate(self.break_reasons):
            where = f"{b['file']}:{b['line']}" if b["file"] else "<unknown>"
            lines.append(f"  break {i + 1}: {where}  {b['source'] or ''}".rstrip())
            lines.append(f"    {b['reason']}")
            # The trigger the break record holds: the reason alone does not say which call it was.
            lines.append(f"    asked for: {b['asked_for']} [{b['kind']}]")
            if b["hint"]:
                lines.append(f"    hint: {b['hint']}")
        for g in self.graphs:
            lines.append(f"  graph {g.id}: {', '.join(g.ops)}")
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn, *args, **kwargs):
    """Runs one call of dyn.compile(fn) afresh and reports its graphs and graph breaks."""
    c = _compile.lookup(fn)
    target = c.__wrapped__ if c is not None else fn
    opts = {} if c is None else {"fullgraph": False, "backend": c.backend, "dynamic": c.dynamic}
    fresh = _compile.CompiledFunction(
        target, name=f"explain({c.name if c else getattr(target, '__name__', 'fn')})", cache_limit=8,
        _count=False, **({"fullgraph": False, "backend": "default"} | opts)
    )
    fresh(*args, **kwargs)
    name = fresh.name
    return ExplainOutput(name, graphs(name), events("graph_break", name), guards(fresh)[0] if guards(fresh) else [])
