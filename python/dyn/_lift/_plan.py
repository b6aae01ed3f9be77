"""The lift of a traced call: Lift (a lifted entry), _build (the code that checks the Python guards,
skipping those the engine's tensor guards imply, fetches the graph inputs and the floats read at
each call, sets the .grad effects and rebuilds the result), _compile_hit (the generated hit and
fetch functions), and make_lift, which asks the engine for the entry's plan.
"""
import math

import _dyn

from ._expr import Codegen, Expr, Guard, _text
from ._prov import CONST, _MISS, Map, Opaque, Refused, Seq, Src, _is_prim, _tensor_type, _trusted_value


# ---- the lift: guards, fetches, rebuild ----


class Lift:
    """A lifted entry: one generated function checks the guards, fetches the inputs, runs the
    plan and rebuilds the result."""

    def __init__(self, entry, lines, fn, plan, instructions, seconds, nargs, kwnames):
        # Only text: a lift holds nothing of the program's strongly (see Codegen).
        self.entry, self.lines, self.fn, self.plan = entry, lines, fn, plan
        self.instructions, self.seconds = instructions, seconds
        self.nargs, self.kwnames = nargs, kwnames
        self.hits = 0
        self.verified = 0  # hits verify mode checked against the body

    def guard_lines(self):
        """Each Python guard as (text, where it was read)."""
        return list(self.lines)


def _tensor_meta(t):
    """What an op can read of a tensor besides its values."""
    return (type(t), t.dtype, tuple(t.shape), t.stride(), t.requires_grad, str(t.device))


def _meta_text(t):
    return f"{str(t.dtype).replace('dyn.', '')}{list(t.shape)} strides {list(t.stride())}" + (
        ", requires_grad" if t.requires_grad else "")


_META_ATTRS = {"shape", "ndim", "dtype", "requires_grad", "device", "is_cuda", "layout", "is_sparse", "is_quantized"}
_META_METHODS = {"size", "dim", "ndimension", "stride", "is_contiguous", "numel", "nelement", "is_floating_point",
                 "is_complex", "element_size", "get_device"}


def _implied_by_tensor_guards(e, input_exprs):
    """e is computed from constants and the guarded metadata of graph inputs alone."""
    op, a = e.op, e.args
    if op == "lit":
        return True
    if op == "attr" and a[1] in _META_ATTRS and a[0] in input_exprs:
        return True
    if op == "attr" and a[0].op == "attr" and a[0].args[1] == "dtype":  # x.dtype.is_floating_point
        return _implied_by_tensor_guards(a[0], input_exprs)
    if op == "mcall" and a[1] in _META_METHODS and a[0] in input_exprs:
        return all(_implied_by_tensor_guards(x, input_exprs) for x in a[2:])
    if op == "item":
        return _implied_by_tensor_guards(a[0], input_exprs)
    if op in ("binop", "unary"):
        return all(_implied_by_tensor_guards(x, input_exprs) for x in a[1:])
    if op == "call" and a[0] in (len, tuple, list, int, bool, float):
        return all(_implied_by_tensor_guards(x, input_exprs) for x in a[1:])
    return False


def _expected_text(g):
    v = g.value
    if g.kind == "type_eq":
        return repr(v)
    if g.kind == "bool":
        return f"bool() {v}"
    if g.kind == "none":
        return "None" if v else "not None"
    if g.kind == "absent":
        return "not a global"
    if g.kind == "same":
        return "the same object"
    return getattr(v, "__qualname__", None) or f"the {type(v).__name__} seen when traced"


def key_of(t, e):
    return (id(t), e)


def _build(tracer, result, outs, snapshot):
    """Code that checks the guards, fetches the inputs and rebuilds the result; raises Refused."""
    of_sources, out_ids, graph_inputs = snapshot
    T = _tensor_type()
    cg = Codegen()
    body = []

    def emit_guard(g):
        if g.kind == "absent":
            return f"{g.value!r} not in {cg.expr(g.e)}"
        code = cg.expr(g.e)
        if g.kind == "type_eq":
            v = g.value
            if isinstance(v, (list, dict)):
                return f"type({code}) is {cg.k(type(v))} and {code} == {cg.k(v)}"
            if type(v) is bool or v is None:
                return f"{code} is {v}"  # singletons
            if type(v) is float and v != v:
                return "False"
            if type(v) is float and v == 0:  # 0.0 == -0.0, but an op may tell them apart
                return f"type({code}) is float and {code} == 0.0 and {cg.k(math.copysign)}(1.0, {code}) == " \
                       f"{math.copysign(1.0, v)!r}"
            return f"type({code}) is {cg.k(type(v))} and {code} == {cg.lit(v)}"
        if g.kind == "id":
            return f"{code} is {cg.k(g.value)}"
        if g.kind == "bool":  # truthiness, as the branch tested it
            return code if g.value else f"not {code}"
        if g.kind == "none":
            return f"{code} is None" if g.value else f"{code} is not None"
        if g.kind == "same":
            return f"{code} is {cg.expr(g.other)}"
        raise AssertionError(g.kind)

    # The engine checks each graph input's dtype, shape, strides and requires_grad: a Python guard
    # over only those of graph inputs is implied, and skipped.
    srcs = list(tracer.tensor_srcs.values())
    input_exprs = {e for (t, e), vid in zip(srcs, of_sources) if vid >= 0}
    infos = []  # per guard in the code: (text, what it expected, where); a miss stores its index and value

    def check(cond, value_code, text, expected, where):
        infos.append((text, expected, where))
        body.append(f"if not ({cond}): L[0] = ({len(infos) - 1}, {value_code}); return MISS")

    for g in tracer.guards:
        if g.kind in ("type_eq", "bool", "none") and _implied_by_tensor_guards(g.e, input_exprs):
            continue
        n0 = len(cg.lines)
        cond = emit_guard(g)
        body.extend(cg.lines[n0:])
        del cg.lines[n0:]
        code = "None" if g.kind in ("absent", "same") else cg.expr(g.e)
        check(cond, code, g.text(tracer.names), _expected_text(g), g.where)
    # graph inputs, in the plan's order: every source of one (a tensor read from two places is
    # fetched from both; the engine checks they are one tensor again)
    srcs = list(tracer.tensor_srcs.values())
    input_ids, fetch = [], []
    for (t, e), vid in zip(srcs, of_sources):
        if vid == -2:
            raise Refused("a tensor the call reads shares memory with another input (a view of it): tier 2 does "
                          "not check views of inputs yet")
        if vid == -3:
            continue  # a value the call made: the graph fixes its metadata
        if vid < 0:
            # no graph input: an op read only its metadata (ones_like(x)), which the graph baked
            n0 = len(cg.lines)
            code = cg.expr(e)
            body.extend(cg.lines[n0:])
            del cg.lines[n0:]
            check(f"{cg.k(_tensor_meta)}({code}) == {cg.k(_tensor_meta(t))}", f"{cg.k(_meta_text)}({code})",
                  f"the metadata of {_text(e, tracer.names)}", _meta_text(t), tracer.where_of.get(key_of(t, e), ""))
            tracer.meta_lines.append((f"{_text(e, tracer.names)}: {_meta_text(t)} (its metadata is baked in)",
                                      tracer.where_of.get(key_of(t, e), "")))
            continue
        n0 = len(cg.lines)
        code = cg.expr(e)
        body.extend(cg.lines[n0:])
        del cg.lines[n0:]
        input_ids.append(vid)
        fetch.append(code)
    float_slots, float_fetch = [], []
    for node, e, v, where in tracer.floats:
        slot = _dyn._lift_float_slot(tracer.state, node, v)
        n0 = len(cg.lines)
        code = cg.expr(e)
        body.extend(cg.lines[n0:])
        del cg.lines[n0:]
        if slot < 0:  # not found in the node: the value itself is guarded
            g = Guard("type_eq", e, v, where)
            check(emit_guard(g), code, g.text(tracer.names), repr(v), where)
            tracer.meta_lines.append((g.text(tracer.names), where))
            continue
        float_slots += [node, slot]
        float_fetch.append(code)
        tracer.meta_lines.append((f"{_text(e, tracer.names)} is a float read at each call ({v!r} when traced)", where))
    # effects: the .grad of each tensor the call set, stored after the graph ran; its holder is
    # found before (the sources read what the body read)
    effect_lines, holders = [], []
    for e, j in tracer.effects:
        if j is not None and out_ids[j] < 0:
            raise Refused("the call leaves a .grad that is not a value of its graph")
        n0 = len(cg.lines)
        code = cg.expr(e)
        body.extend(cg.lines[n0:])
        del cg.lines[n0:]
        holders.append(code)
        effect_lines.append(f"{code}.grad = {'None' if j is None else f'R[{j}]'}")
    missing = sorted(set(graph_inputs) - set(input_ids))
    if missing:
        raise Refused(f"input %{missing[0]} of the graph has no source the next call could fetch it from")
    # the result
    value, prov = result

    def rebuild(v, p):
        if isinstance(v, T):
            # A tensor from outside the call (an argument written in place and returned, or one
            # only read): the same object again, fetched from its source, as the body returns it.
            # Not a tensor made in the call that a source reached (an item of a list it made).
            for pass_ in (0, 1):
                for (t, e), vid in zip(srcs, of_sources):
                    if t is v and (vid >= 0 if pass_ == 0 else vid == -1):
                        n0 = len(cg.lines)
                        code = cg.expr(e)
                        body.extend(cg.lines[n0:])
                        del cg.lines[n0:]
                        return code
                if pass_ == 0:
                    for j, t in enumerate(outs):
                        if t is v and out_ids[j] >= 0:
                            return f"R[{j}]"
            raise Refused("the function returns a tensor that is not a value of its graph")
        p = tracer.prov_of_container(v, p) if isinstance(v, (list, dict)) else p
        if v is None or (p is CONST and _is_prim(v)):
            return cg.lit(v)
        if isinstance(p, Src) and (_is_prim(v) or not isinstance(v, (list, tuple, dict))):
            n0 = len(cg.lines)
            code = cg.expr(p.e)
            body.extend(cg.lines[n0:])
            del cg.lines[n0:]
            return code
        if type(v) in (tuple, list) and isinstance(p, Seq) and len(p.items) == len(v):
            parts = [rebuild(x, q) for x, q in zip(v, p.items)]
            return ("(" + ", ".join(parts) + ",)") if type(v) is tuple else "[" + ", ".join(parts) + "]"
        if type(v) is dict and isinstance(p, Map) and all(_is_prim(k) for k in v):
            return "{" + ", ".join(f"{cg.lit(k)}: {rebuild(x, p.items.get(k, Opaque('a value')))}"
                                   for k, x in v.items()) + "}"
        if p is CONST and _trusted_value(v):
            return cg.k(v)
        raise Refused(f"the function returns a {type(v).__name__} that cannot be rebuilt without the body")

    ret_code = rebuild(value, prov)
    tracer.guard_infos = infos
    rebuild = None  # a recursive closure is a cycle (through its cell): it would keep the tracer to a gc
    tracer.effect_holders = holders
    return body, fetch, input_ids, ret_code, cg, float_slots, float_fetch, effect_lines


def _compile_hit(body, fetch, ret_code, cg, plan, nargs, kwnames, float_fetch, missed, effect_lines, holders):
    """hit(A, KW, C, M): the call served (or MISS); and fetch(A, KW, M): the inputs and the holders of
    the .grad the call sets, without running anything (or MISS), for verify mode."""
    def head(name, args):
        src = [f"def {name}({args}):"]
        src.append(f"    if len(A) != {nargs} or len(KW) != {len(kwnames)}: return MISS")
        for k in kwnames:
            src.append(f"    if {k!r} not in KW: return MISS")
        src.append("    try:")
        for line in body:
            src.append("        " + line)
        src.append(f"        I = ({''.join(c + ', ' for c in fetch)})")
        return src
    src = head("hit", "A, KW, C, M")
    if float_fetch:
        src.append(f"        F = ({''.join(c + ', ' for c in float_fetch)})")
    src.append("    except Exception:")
    src.append("        return MISS")
    src.append("    R = PLAN(I, C, F)" if float_fetch else "    R = PLAN(I, C)")
    src.append("    if R is None: return MISS")
    src.extend("    " + line for line in effect_lines)
    src.append(f"    return {ret_code}")
    text = "\n".join(src)
    src = head("fetch", "A, KW, M")
    src.append(f"        E = ({''.join(c + ', ' for c in holders)})")
    src.append("    except Exception:")
    src.append("        return MISS")
    src.append("    return I, E")
    ns = {"K": cg.consts, "MISS": _MISS, "PLAN": plan, "L": [None]}
    exec(compile("\n".join(src), "<dyn lifted call: fetch>", "exec"), ns)
    fetch_fn = ns.pop("fetch")
    ns = {"K": cg.consts, "MISS": _MISS, "PLAN": plan, "L": missed}
    exec(compile(text, "<dyn lifted call>", "exec"), ns)
    return ns.pop("hit"), text, fetch_fn  # not left in their globals: a cycle would keep the plan until a gc


def names_for(owner):
    """How the user writes the call's sources: the parameters' names, `self` for a module."""
    names = {}
    target = owner._fn
    params = owner._arg_names
    if owner._module is not None:
        names["root"] = "self"
        params = params[1:] if params and params[0] == "self" else params
    else:
        names["root"] = getattr(target, "__name__", "fn")
    for i, p in enumerate(params):
        names[("arg", i)] = p
    return names


def result_tensors(result):
    """The tensors of the result, in rebuild order (before the region ends)."""
    T = _tensor_type()
    out = []

    def walk(v):
        if isinstance(v, T):
            if not any(t is v for t in out):
                out.append(v)
        elif type(v) in (tuple, list):
            for x in v:
                walk(x)
        elif type(v) is dict:
            for x in v.values():
                walk(x)
    walk(result)
    walk = None  # recursive: a cycle through its cell otherwise (holding the result's tensors)
    return out


def make_lift(owner, tracer, result, outs, snapshot, seconds):
    """After a traced call ended: a Lift for the entry that served it; raises Refused."""
    if snapshot is None:
        why = _dyn._lift_plan(owner._state, [], [], [])  # the engine's words: which break, where
        if isinstance(why, tuple):
            raise Refused(*why)
        raise Refused("the call broke its graph: Python runs between the graphs")
    tracer.names = names_for(owner)
    tracer.state = owner._state
    if tracer.backward_at is not None:
        # backward() in the body reached the inputs that require grad as the leaves they were:
        # each must be a leaf again (a non-leaf's gradient flows on, through history from
        # outside the call that the graph does not hold)
        for (t, e), vid in zip(tracer.tensor_srcs.values(), snapshot[0]):
            if vid >= 0 and t.requires_grad:
                if t.grad_fn is not None:
                    raise Refused(f"backward() runs into autograd history from outside the call ("
                                  f"{_text(e, tracer.names)} is not a leaf)", tracer.backward_at)
                n = len(tracer.guards)
                tracer.guard("none", Expr("attr", e, "grad_fn"), True)
                # and one a hook registered since would see its gradient: Python the body runs
                tracer.guard("none", Expr("attr", e, "_backward_hooks"), True)
                for g in tracer.guards[n:]:
                    g.where = tracer.backward_at
    body, fetch, input_ids, ret_code, cg, float_slots, float_fetch, effect_lines = _build(
        tracer, tracer.ret, outs, snapshot)
    plan = _dyn._lift_plan(owner._state, input_ids, list(snapshot[1]), float_slots)
    if isinstance(plan, tuple):
        raise Refused(*plan)
    nargs = tracer.nargs
    missed = [None]
    hit, text, fetch_fn = _compile_hit(body, fetch, ret_code, cg, plan, nargs, tracer.kwnames, float_fetch, missed,
                                       effect_lines, tracer.effect_holders)
    names = tracer.names
    lift = Lift(plan.entry, [(g.text(names), g.where) for g in tracer.guards] + tracer.meta_lines, hit, plan,
                tracer.instructions,
                seconds, nargs, tracer.kwnames)
    lift.code = text
    lift.fetch = fetch_fn
    lift.effects = [f"{_text(e, names)}.grad = {'None' if j is None else 'a gradient the graph computes'}"
                    for e, j in tracer.effects]
    lift.missed, lift.infos = missed, tracer.guard_infos
    return lift
