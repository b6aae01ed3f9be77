"""What a running frame's code says, for naming values (dyn/_sources.py): the name an instruction
stores its result to, the source text of an operand, the call a frame is in, whether a frame is
dyn's own, and the safe evaluation of a small expression in a frame's scope."""
import ast
import dis
import linecache
import types
import weakref

_package_dir = __file__.rsplit("/", 1)[0] + "/"


def _is_number(v):
    return type(v) in (bool, int, float)


def _instance_dict(obj):
    try:
        d = object.__getattribute__(obj, "__dict__")
    except Exception:  # noqa: BLE001 - no instance dict
        return None
    return d if type(d) is dict else None


def _root_of(name):
    for i, ch in enumerate(name):
        if ch in ".[":
            return name[:i]
    return name


_STORES = ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF")
_CONVERSIONS = ("int", "float", "bool")
_targets = weakref.WeakKeyDictionary()  # code -> {lasti: name or ""}


def _store_target(code, lasti):
    """The name the result of the call at instruction lasti is stored to, on its line, when only
    int()/float()/bool() stand between (`n = int(t.item())`); else ""."""
    cached = _targets.setdefault(code, {})
    if lasti in cached:
        return cached[lasti]
    name = ""
    try:
        ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        at = next(k for k, i in enumerate(ins) if i.offset == lasti)
        line = ins[at].positions.lineno if ins[at].positions else None
        wrappers = 0
        for i in ins[at + 1:]:
            if i.positions is not None and i.positions.lineno not in (None, line):
                break
            if i.opname in ("PRECALL", "CALL") and i.arg == 1:
                wrappers += i.opname == "CALL"
                continue
            if i.opname in _STORES:
                # Each one-argument call around the value must be a conversion loaded in this
                # statement (after the one before it on the line ended).
                start = 0
                for k in range(at - 1, -1, -1):
                    if ins[k].positions is None or ins[k].positions.lineno != line:
                        start = k + 1
                        break
                    if ins[k].opname in _STORES + ("POP_TOP", "RETURN_VALUE"):
                        start = k + 1
                        break
                loads = [j for j in ins[start:at] if j.opname in ("LOAD_GLOBAL", "LOAD_NAME") and
                         j.argval in _CONVERSIONS]
                if len(loads) >= wrappers:
                    name = i.argval
            break
    except (StopIteration, AttributeError, TypeError, ValueError):
        name = ""
    cached[lasti] = name
    return name


def _argument_holding(frame, value):
    """("name", arg) when exactly one argument of one of dyn's own functions holds the float value
    (masked_fill's `value`): its caller's expression then names it. Only dyn's frames are read."""
    code = frame.f_code
    args = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    loc = frame.f_locals
    hits = [a for a in args if type(loc.get(a)) is float and (loc[a] == value or (loc[a] != loc[a] and value != value))]
    return ("name", hits[0]) if len(hits) == 1 else None


def _is_library(frame):
    return frame is not None and frame.f_code.co_filename.startswith(_package_dir)


def _simple_access(text):
    """A name, attribute or item read as it is (`lr`, `-lr`, `g['eps']`), not arithmetic on it."""
    try:
        e = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        e = e.operand
    while isinstance(e, (ast.Attribute, ast.Subscript)):
        e = e.value
    return isinstance(e, ast.Name)


def _last_key(text):
    """The attribute or constant key an access ends with: `lr` for g['lr'] and opt.lr."""
    try:
        e = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(e, ast.UnaryOp):
        e = e.operand
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return e.attr
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant):
        return e.slice.value
    return None


def _kind_of(frame, text, sources):
    """The kind of an expression's source: an argument of the compiled function, a local, a closure
    cell or a global; an expression reading several (1.0 / math.sqrt(d)) takes the nearest."""
    try:
        names = [n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)]
    except SyntaxError:
        names = []
    code = frame.f_code

    def kind(root):
        if root in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
            return "argument" if code is getattr(sources.owner._fn, "__code__", None) else "local"
        if root in code.co_freevars:
            return "closure"
        if root in code.co_varnames or root in code.co_cellvars:
            return "local"
        return "global"

    kinds = {kind(n) for n in names} if names else {kind(_root_of(text))}
    for k in ("argument", "local", "closure"):
        if k in kinds:
            return k
    return "global"


def _float_literal(e):
    """The value of float("-inf"), float('nan') and the like: a literal written as a call."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        v = _float_literal(e.operand)
        return None if v is None else -v
    if (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "float" and len(e.args) == 1
            and not e.keywords and isinstance(e.args[0], ast.Constant) and type(e.args[0].value) in (str, int)):
        try:
            return float(e.args[0].value)
        except (ValueError, OverflowError):
            return None
    return None


_operands = weakref.WeakKeyDictionary()  # code -> {lasti: (shape, operand expressions)}
_literals = weakref.WeakKeyDictionary()  # code -> {(lasti, side, type, repr): ("literal", text)}


def _operand_exprs(code, lasti):
    """(shape, operand expressions) of the operator or call at instruction lasti of code: shape is
    "binop" ([left, right]), "aug" ([value]) or "call" (arguments, keyword values)."""
    cached = _operands.setdefault(code, {})
    if lasti in cached:
        return cached[lasti]
    out = ("", [])
    try:
        positions = list(code.co_positions())[lasti // 2]
        line, end_line, col, end_col = positions
        if None not in positions:
            # Columns count UTF-8 bytes.
            lines = [linecache.getline(code.co_filename, n).encode() for n in range(line, end_line + 1)]
            if len(lines) == 1:
                seg = lines[0][col:end_col]
            else:
                seg = lines[0][col:] + b"".join(lines[1:-1]) + lines[-1][:end_col]
            seg = seg.decode()
            try:
                tree = ast.parse("(" + seg + ")", mode="eval").body
            except SyntaxError:
                tree = ast.parse(seg.strip()).body[0]
            if isinstance(tree, ast.AugAssign):
                out = ("aug", [tree.value])
            elif isinstance(tree, ast.BinOp):
                out = ("binop", [tree.left, tree.right])
            elif isinstance(tree, ast.Compare) and len(tree.comparators) == 1:
                out = ("binop", [tree.left, tree.comparators[0]])
            elif isinstance(tree, ast.Call):
                out = ("call", list(tree.args) + [k.value for k in tree.keywords])
    except (SyntaxError, IndexError, ValueError, TypeError, UnicodeError):
        out = ("", [])
    cached[lasti] = out
    return out


def _call_target(frame):
    """`model` for a frame stopped at `model(x)`; None when the call is not by a plain name."""
    code, lasti = frame.f_code, frame.f_lasti
    try:
        line, end_line, col, end_col = list(code.co_positions())[lasti // 2]
        if None in (line, end_line, col, end_col):
            return None
        lines = [linecache.getline(code.co_filename, n).encode() for n in range(line, end_line + 1)]
        seg = (lines[0][col:end_col] if len(lines) == 1 else
               lines[0][col:] + b"".join(lines[1:-1]) + lines[-1][:end_col]).decode()
        tree = ast.parse("(" + seg + ")", mode="eval").body
    except (SyntaxError, IndexError, ValueError, UnicodeError):
        return None
    if isinstance(tree, ast.Call):
        e = tree.func
        while isinstance(e, ast.Attribute):
            e = e.value
        if isinstance(e, ast.Name):
            return ast.unparse(tree.func)
    return None


def _local_names(code):
    return set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)


def _operand_text(frame, value, side):
    """("name", text) of the operand of the current instruction that is the number `value`,
    ("literal", text) when it is written as a number, or None.

    Nothing of the frame's locals is read (on Python 3.11 that copies them into a dict the frame
    keeps, which a locals() the user holds would show): a binary operator's side says which operand
    the number is; a call's arguments are told apart by being literals or globals."""
    shape, exprs = _operand_exprs(frame.f_code, frame.f_lasti)
    if not exprs:
        return None
    if shape == "binop" and side in ("rhs", "lhs"):
        exprs = [exprs[1] if side == "rhs" else exprs[0]]
    for e in exprs:
        c = e.operand if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) else e
        if isinstance(c, ast.Constant) and _is_number(c.value) and (c.value if c is e else -c.value) == value:
            return ("literal", ast.unparse(e))
        v = _float_literal(e)
        if v is not None and "float" not in frame.f_globals and (v == value or (v != v and value != value)):
            return ("literal", ast.unparse(e))
    local = _local_names(frame.f_code)
    candidates = []
    for e in exprs:
        if isinstance(e, ast.Constant):
            continue
        names = {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
        if not names:
            continue  # a literal that is not this number: (), "mean"
        if not (names & local):
            try:
                v = _safe_eval(e, frame.f_globals)
            except Exception:  # noqa: BLE001 - anything it cannot read without running code
                continue
            if _is_number(v) and v == value:
                return ("name", ast.unparse(e))
            continue
        candidates.append(e)
    # A binary operator's operand is certain; of a call's arguments, the one left (x.mul_(s)).
    if len(candidates) == 1:
        return ("name", ast.unparse(candidates[0]))
    return None


_ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}


def _safe_eval(e, scope):
    """The value of a global name, its attributes and items, or arithmetic on numbers, read
    without running user code (no properties, no __getattr__, no __getitem__ of subclasses)."""
    if isinstance(e, ast.Constant):
        return e.value
    if isinstance(e, ast.Name):
        if e.id in scope:
            return scope[e.id]
        raise LookupError(e.id)
    if isinstance(e, ast.Attribute):
        base = _safe_eval(e.value, scope)
        d = base.__dict__ if type(base) is types.ModuleType else _instance_dict(base)
        if d is None or e.attr not in d:
            raise LookupError(e.attr)
        return d[e.attr]
    if isinstance(e, ast.Subscript):
        base = _safe_eval(e.value, scope)
        if type(base) not in (dict, list, tuple):
            raise LookupError("subscript")
        return base[_safe_eval(e.slice, scope)]
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        v = _safe_eval(e.operand, scope)
        if not _is_number(v):
            raise TypeError
        return -v if isinstance(e.op, ast.USub) else +v
    if isinstance(e, ast.BinOp) and type(e.op) in _ARITH:
        a, b = _safe_eval(e.left, scope), _safe_eval(e.right, scope)
        if not (_is_number(a) and _is_number(b)) or (type(e.op) is ast.Pow and abs(b) > 64):
            raise TypeError
        return _ARITH[type(e.op)](a, b)
    raise LookupError(type(e).__name__)
