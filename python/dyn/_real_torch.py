"""`dynrepl --real-torch`: PyTorch's own torch.compile (Dynamo) seen through dynrepl's views.

dynrepl calls install() at start. It puts the PyTorch venv on sys.path ($DYNREPL_TORCH, else
/opt/torch-ref, which `scripts/setup.sh --with-torch` makes) and, once the script imports torch,
attaches one handler to Dynamo's structured trace log (torch._logging's trace_log). Each record
becomes what dyn's own capture logs:

- dynamo_graph_break_reason: a graph_break event (the user's line, Dynamo's gb_type and reason);
- recompile_reasons: a recompile event with one failed guard per older cache entry (expected and
  actual values where Dynamo or the guard's source gives them). It is logged while Dynamo is about
  to compile again, so `--break recompile` stops there, in the frame that called the function;
- dynamo_output_graph: the FX graph as text (:graphs, :graph), a node per line with its user line;
- dynamo_cpp_guards_str: the new entry's guards, one per line with source and user line (:guards);
- compilation_metrics: a compile event, or a fallback when Dynamo gave up (the recompile limit).

What it reads beyond the record names (frame locals of Dynamo's functions, the guard manager's
tree) is internal to PyTorch and pinned to 2.15: on another version nothing is attached and a
warning says so. Dynamo does not expose cache hits, hit counts or step times: those views stay
empty for its functions.
"""
import builtins
import importlib.abc
import importlib.util
import linecache
import logging
import os
import re
import sys
import warnings

TESTED = "2.15."
DEFAULT_VENV = "/opt/torch-ref"
INSTALL_HINT = ("PyTorch 2.15 for dynrepl --real-torch is installed by `scripts/setup.sh --with-torch` (a venv at "
                f"{DEFAULT_VENV}); or set DYNREPL_TORCH to a venv or site-packages folder that has it")

_ATTACHED = {}


def site_packages(path):
    """The site-packages folder of a venv (or the folder itself, if it is one); None if neither."""
    if os.path.isdir(os.path.join(path, "torch")):
        return path
    cand = os.path.join(path, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")
    return cand if os.path.isdir(cand) else None


def install():
    env = os.environ.get("DYNREPL_TORCH")
    site = site_packages(env or DEFAULT_VENV)
    if env and site is None:
        warnings.warn(f"DYNREPL_TORCH={env!r} is not a venv or site-packages folder; {INSTALL_HINT}", stacklevel=1)
    if site and site not in sys.path:
        # After the script's folder and PYTHONPATH, before the system's packages: torch runs with the
        # versions its venv holds (numpy, sympy), not Debian's.
        system = [i for i, p in enumerate(sys.path) if p.endswith(("dist-packages", "site-packages"))]
        sys.path.insert(system[0] if system else len(sys.path), site)
    from . import _traceback
    _traceback.MODULE_HINTS["torch"] = INSTALL_HINT
    _traceback.MODULE_HINTS["torch_xla"] = (
        "PyTorch from PyPI has no torch_xla, so under --real-torch a program that imports it cannot run; without "
        "--real-torch, torch_xla maps onto dyn")
    sys.meta_path.insert(0, _TorchWatcher())


class _AttachingLoader(importlib.abc.Loader):
    """torch's own loader, which calls attach() once torch is loaded."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        attach(module)

    def __getattr__(self, name):  # get_data, get_filename, get_resource_reader, ...: the real loader's
        return getattr(self.loader, name)


class _TorchWatcher(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on `import torch` it wraps the real loader so that attach() runs once
    torch is loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or _ATTACHED:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec("torch")
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None  # the import fails as usual; the printed error carries INSTALL_HINT
        spec.loader = _AttachingLoader(spec.loader)
        return spec


def attach(torch):
    if _ATTACHED:
        return
    version = getattr(torch, "__version__", "?")
    if not version.startswith(TESTED):
        warnings.warn(f"dynrepl --real-torch reads Dynamo's internals as PyTorch {TESTED}x has them; this is PyTorch "
                      f"{version}: its graphs, breaks, guards and recompiles are not shown", stacklevel=2)
        return
    from torch._logging._internal import trace_log

    from dyn import _dyn
    _dyn._add_library_dir(os.path.dirname(torch.__file__) + os.sep)
    _dyn._add_library_dir(os.path.dirname(logging.__file__) + os.sep)
    _dyn._add_library_dir(os.path.dirname(os.__file__) + os.sep)  # the stdlib: contextlib, functools
    handler = _DynamoHandler(_dyn)
    trace_log.addHandler(handler)
    trace_log.setLevel(logging.DEBUG)
    _ATTACHED["handler"] = handler
    from . import _compile
    _compile.RESET_HOOKS.append(handler.reset)


# ---------------------------------------------------------------- reading Dynamo ------

_RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_EXPECTED = re.compile(r"expected (.+?), actual (.+?)(?:\.|$)")


def _frame_named(name, test=None):
    f = sys._getframe(2)
    while f is not None and not (f.f_code.co_name == name and (test is None or test(f))):
        f = f.f_back
    return f


def _last_user_frame(text):
    """(file, line, function) of the last `File "...", line N, in f` of a Dynamo message."""
    found = _FILE_LINE.findall(text or "")
    return (found[-1][0], int(found[-1][1]), found[-1][2]) if found else None


def _def_line(code):
    """The `def` line of a code object (co_firstlineno is its first decorator's)."""
    for n in range(code.co_firstlineno, code.co_firstlineno + 20):
        text = linecache.getline(code.co_filename, n).lstrip()
        if text.startswith(("def ", "async def ")):
            return n
    return code.co_firstlineno


def _guard_kind(dynamo_kind, text):
    if dynamo_kind in ("TENSOR_MATCH", "DIMENSION_DYNAMIC_MARKING_GUARD") or "size mismatch" in text \
            or "stride mismatch" in text or ".size()" in text:
        return "tensor_input"
    if dynamo_kind in ("EQUALS_MATCH", "CONSTANT_MATCH", "TYPE_MATCH", "ID_MATCH", "BOOL_MATCH", "NONE_MATCH",
                       "LENGTH_CHECK", "DICT_LENGTH", "TUPLE_ITERATOR_LEN"):
        return "constant"
    if dynamo_kind in ("GLOBAL_STATE", "DEFAULT_DEVICE", "TORCH_FUNCTION_STATE", "GRAD_MODE"):
        return "global_state"
    return "op"


def _break_kind(gb_type):
    t = (gb_type or "").lower()
    if "item()" in t:
        return "item"
    if "tolist" in t:
        return "tolist"
    if "numpy" in t:
        return "numpy"
    if "print" in t:
        return "print"
    if "data-dependent" in t or "data dependent" in t:
        return "data_dependent_branch"
    return "unsupported_op"


def _leaves(mgr):
    """(source, Dynamo's guard kind, verbose check) of every leaf guard of a guard manager tree."""
    src = mgr.get_source()
    for g in mgr.get_leaf_guards():
        for part in g.verbose_code_parts():
            yield src, type(g).__name__, part
    for child in mgr.get_child_managers():
        yield from _leaves(child)


class _DynamoHandler(logging.Handler):
    def __init__(self, dyn_module):
        super().__init__(logging.DEBUG)
        self._dyn = dyn_module
        self._segments = {}  # (fn, resume line) -> segment
        self._broken = {}    # compile id -> "graph break (kind) at file:line"
        self._qualnames = {}  # co_name -> the qualified name last compiled under it (for its resumes)
        self._failed_once = set()

    def reset(self):
        """:reset and dyn.debug.reset(): Dynamo forgets its caches too, so that what runs next is
        what the views show."""
        import torch._dynamo
        torch._dynamo.reset()
        self._segments.clear()
        self._broken.clear()
        self._qualnames.clear()

    # Dynamo calls emit inside its compile: a failure here must not become the user's.
    def emit(self, record):
        md = getattr(record, "metadata", None) or {}
        try:
            if "artifact" in md:
                name = md["artifact"].get("name")
                if name == "recompile_reasons":
                    self._recompile(md, record.payload)
                elif name == "dynamo_graph_break_reason":
                    self._graph_break(md, record.payload)
            elif "dynamo_output_graph" in md:
                self._graph(md)
            elif "dynamo_cpp_guards_str" in md:
                self._guards(md)
            elif "compilation_metrics" in md:
                self._metrics(md)
        except (SystemExit, KeyboardInterrupt):
            raise  # :quit at a stop, Ctrl-C
        except Exception as e:  # noqa: BLE001 - a PyTorch internal that moved: say so once per kind
            kind = next((k for k in md if k not in ("frame_id", "frame_compile_id", "attempt")), "?")
            if kind not in self._failed_once:
                self._failed_once.add(kind)
                warnings.warn(f"dynrepl --real-torch could not read Dynamo's {kind} record ({type(e).__name__}: {e}); "
                              "that view stays incomplete", stacklevel=2)

    def _fn_of(self, code):
        """(function, segment) of a code Dynamo compiles (a code object, or a name when that is all a
        record gives): named by its qualified name, so two modules' `forward`s stay apart
        (A.forward, B.forward); a resume function is a later segment of the function it resumes."""
        co_name = code if isinstance(code, str) else code.co_name
        m = _RESUME.match(co_name)
        if not m:
            name = co_name if isinstance(code, str) else getattr(code, "co_qualname", co_name)
            self._qualnames[co_name] = name
            return name, 0
        fn = self._qualnames.get(m.group(1), m.group(1))
        key = (fn, int(m.group(2)))
        if key not in self._segments:
            self._segments[key] = 1 + sum(1 for k in self._segments if k[0] == fn)
        return fn, self._segments[key]

    @staticmethod
    def _fix_path(where, code_file):
        """Dynamo shortens a user file outside torch's tree wrongly (/tmp/a.py -> mp/a.py): the code's own name."""
        m = re.match(r"(.*?):(\d+) in (\S+)(.*)$", where.strip())
        if not m:
            return where.strip()
        path = m.group(1)
        if code_file and code_file != path and code_file.endswith(path):
            path = code_file
        return f"{path}:{m.group(2)} in {m.group(3)}{m.group(4)}"

    def _graph_break(self, md, payload):
        f = _frame_named("log_graph_break")
        exc = f.f_locals.get("exc") if f else None
        code = f.f_locals["self"].f_code if f and "self" in f.f_locals else None
        fn, segment = self._fn_of(code) if code else ("?", 0)
        gb_type = getattr(exc, "gb_type", "") or ""
        where = None
        stack = getattr(exc, "real_stack", None)
        if stack:
            where = (stack[-1].filename, stack[-1].lineno, stack[-1].name)
        if where is None:
            where = _last_user_frame(payload)
        text = str(getattr(exc, "msg", "") or payload or "")
        reason = next((ln.strip() for ln in text.splitlines() if ln.strip()), gb_type)
        hints = [ln.strip()[len("Hint:"):].strip() for ln in text.splitlines() if ln.strip().startswith("Hint:")]
        kind = _break_kind(gb_type)
        self._broken[(md.get("frame_id"), md.get("frame_compile_id"))] = (
            f"graph break ({kind}) at {os.path.basename(where[0])}:{where[1]}" if where else "graph break")
        ev = {"kind": "graph_break", "fn": fn, "entry": md.get("frame_compile_id", 0), "segment": segment,
              "details": gb_type, "reason": reason, "hint": "; ".join(hints), "break_kind": kind}
        if where:
            ev.update(file=where[0], line=where[1], function=where[2])
        self._dyn._log_event(ev)

    def _recompile(self, md, payload):
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
        f = _frame_named("_compile")
        frame = f.f_locals["frame"]
        code = frame.f_code
        fn, segment = self._fn_of(code)
        f_locals, f_globals = dict(frame.f_locals), frame.f_globals
        failures = []
        for entry in sorted(_debug_get_cache_entry_list(code), key=lambda e: e.compile_id.frame_compile_id):
            info = entry.guard_manager.check_verbose(f_locals)
            if info.result:
                continue
            failed = info.verbose_code_parts[0] if info.verbose_code_parts else ""
            check, _, comment = failed.partition("#")
            check = check.strip()
            dyn_kind, src = "", ""
            for s, k, part in _leaves(entry.guard_manager.root):
                if part.split("#")[0].strip() == check:
                    dyn_kind, src = k, s
                    break
            tensor = re.match(r"tensor '(.+?)' ", check)
            if not src and tensor:  # Dynamo explains a tensor's failure in words: its TENSOR_MATCH guard
                for s, k, part in _leaves(entry.guard_manager.root):
                    if k == "TENSOR_MATCH" and s == tensor.group(1):
                        dyn_kind, src, comment = k, s, part.partition("#")[2]
                        break
            m = _EXPECTED.search(check)
            what = check[:m.start()].rstrip(" .,") if m else check
            fail = {"entry": entry.compile_id.frame_compile_id, "kind": _guard_kind(dyn_kind, check),
                    "what": what if not src or src in what else f"{what}  [{dyn_kind} on {src}]"}
            if m:
                fail["expected"], fail["actual"] = m.group(1), m.group(2)
            else:
                # `len(L['xs']) == 3`: the left side, evaluated in the call's frame, is the actual value
                eq = re.match(r"(.+?) == (.+)$", check)
                if eq and ("L[" in eq.group(1) or "G[" in eq.group(1)):
                    try:
                        scope = {"L": f_locals, "G": f_globals, "__builtins__": builtins}
                        actual = repr(eval(eq.group(1), scope))  # noqa: S307 - Dynamo's own guard source
                        fail["expected"] = eq.group(2)
                        fail["actual"] = actual if len(actual) <= 200 else actual[:197] + "..."
                    except Exception:  # noqa: BLE001 - a source we cannot evaluate shows no actual value
                        pass
            where = self._fix_path(comment.split("#")[-1], code.co_filename) if comment else ""
            m = re.match(r"(.*?):(\d+) in (\S+)", where)
            if m and m.group(1) == code.co_filename:  # not a line inside torch (an inlined nn.Linear)
                fail.update(file=m.group(1), line=int(m.group(2)), function=m.group(3))
            failures.append(fail)
        new_entry = md.get("frame_compile_id", len(failures))
        closest = max((x["entry"] for x in failures), default=-1)
        at = next((x for x in reversed(failures) if "file" in x), None)  # the closest entry's failed line
        line = at["line"] if at else _def_line(code)
        self._dyn._log_event({
            "kind": "recompile", "fn": fn, "entry": new_entry, "segment": segment,
            "file": code.co_filename, "line": line, "function": code.co_name,
            "reason": f"a call of '{fn}' no cache entry served: Dynamo compiles entry {fn}[{new_entry}]",
            "details": (payload or "").strip().splitlines()[0] if payload else "",
            "failures": failures, "closest": closest})

    def _graph(self, md):
        f = _frame_named("compile_and_call_fx_graph")
        gm = f.f_locals.get("gm") if f else None
        code = f.f_locals["tx"].f_code if f and "tx" in f.f_locals else None
        fn, segment = self._fn_of(code if code else f"frame {md.get('frame_id')}")
        lines, ops = [], 0
        for n in gm.graph.nodes if gm is not None else []:
            if n.op in ("call_function", "call_method", "call_module"):
                ops += 1
            target = getattr(n.target, "__name__", None) or str(n.target)
            args = ", ".join(str(a) for a in n.args)
            val = n.meta.get("example_value")
            shape = ""
            if hasattr(val, "shape") and hasattr(val, "dtype"):
                shape = f"  {str(val.dtype).replace('torch.', '')}{list(val.shape)}"
            at = ""
            loc = _last_user_frame(n.meta.get("stack_trace"))
            if loc:
                src = (n.meta.get("stack_trace") or "").splitlines()
                code_line = ""
                for i, ln in enumerate(src):
                    if f'line {loc[1]}, in {loc[2]}' in ln and i + 1 < len(src):
                        code_line = src[i + 1].strip()
                at = f"  # {os.path.basename(loc[0])}:{loc[1]}" + (f"  `{code_line}`" if code_line else "")
            lines.append(f"%{n.name} = {n.op} {target}({args}){shape}{at}")
        ends = self._broken.get((md.get("frame_id"), md.get("frame_compile_id")), "return")
        self._dyn._add_foreign_graph({"fn": fn, "entry": md.get("frame_compile_id", 0), "segment": segment,
                                      "ops": ops, "lines": lines, "ends": ends})

    def _guards(self, md):
        f = _frame_named("__init__", lambda fr: type(fr.f_locals.get("self")).__name__ == "CheckFunctionManager")
        mgr = f.f_locals["self"].guard_manager
        code = _frame_named("_compile").f_locals["frame"].f_code
        fn, _ = self._fn_of(code)
        lines, marks = [], {}
        for src, kind, part in _leaves(mgr.root):
            check, _, comment = part.partition("#")
            check = check.strip()
            if kind == "DIMENSION_DYNAMIC_MARKING_GUARD":  # five hasattr checks per tensor: one line
                marks[src] = marks.get(src, 0) + 1
                continue
            if kind == "GLOBAL_STATE":  # its JSON of every global flag is a screenful
                check = check.split(" against ")[0]
            rest = comment.split("#")[-1] if comment else ""
            where = self._fix_path(rest, code.co_filename) if rest else ""
            if where.startswith(code.co_filename + ":"):  # the user's file, named as the other views name it
                where = os.path.basename(code.co_filename) + where[len(code.co_filename):]
            lines.append(f"{src}  {kind}: {check}" + (f"  # {where}" if where else ""))
        for src, n in marks.items():
            lines.append(f"{src}  DIMENSION_DYNAMIC_MARKING_GUARD: no mark_dynamic/mark_static marks ({n} checks)")
        for part in getattr(mgr.root, "get_epilogue_lambda_guards", lambda: [])():
            for p in part.verbose_code_parts():
                lines.append(f"epilogue  LAMBDA_GUARD: {p.split('#')[0].strip()}")
        self._dyn._add_foreign_entry({"fn": fn, "entry": md.get("frame_compile_id", 0), "guards": lines})

    def _metrics(self, md):
        m = md["compilation_metrics"]
        f = _frame_named("_compile")
        code = f.f_locals.get("frame").f_code if f and f.f_locals.get("frame") is not None else None
        fn, segment = self._fn_of(code if code is not None else m.get("co_name") or "?")
        entry = md.get("frame_compile_id", 0)
        fail = m.get("fail_reason") or ""
        ev = {"fn": fn, "entry": entry, "segment": segment, "file": m.get("co_filename") or "",
              "line": m.get("co_firstlineno") or 0, "function": m.get("co_name") or ""}
        if "recompile limit" in fail.lower() or "cache_size_limit" in fail:
            self._dyn._log_event(dict(ev, kind="fallback", reason=fail.splitlines()[0],
                                      hint="torch._dynamo.config.recompile_limit; the calls run eagerly from now on"))
        elif m.get("has_guarded_code"):
            ops, guards = m.get("graph_op_count"), m.get("guard_count")
            details = f"{ops} ops, {guards} guards" if ops is not None else "no graph: Python only, run as it is"
            self._dyn._log_event(dict(ev, kind="compile", reason=f"Dynamo compiled {fn}[{entry}]", details=details))
