"""The SymPy cross-check of every primitive's rules.

For each primitive there is at least one ``Case``: a small program that uses
it, the shapes of its inputs, and the domain its inputs live in. The check
fills the inputs with SymPy symbols and runs the program, ``mx.vjp`` and
``mx.jvp`` through the ordinary engine: the element lists simply hold
expressions. Then it requires, for every input element ``x_i`` and output
element ``f_j``,

- vjp with symbolic cotangents ``c``:  vjp_i = sum_j c_j * df_j/dx_i
- jvp with symbolic tangents ``t``:    jvp_j = sum_i df_j/dx_i * t_i

with the derivatives taken by ``sympy.diff`` of the forward result. A case in
the "complex" domain has complex64 inputs whose elements are ``x_i + I y_i``
(``x_i``, ``y_i`` real symbols), and a complex output has complex cotangents
``c = u + I w``. Both modes are then checked against the real Jacobian in
the parts, which is MLX's convention for complex numbers:

- vjp:  vjp_i = sum_j Re(conj(c_j) df_j/dx_i) + I Re(conj(c_j) df_j/dy_i)
- jvp with tangents ``p + I q``:  jvp_j = sum_i df_j/dx_i p_i + df_j/dy_i q_i

(for a holomorphic f that is the cotangent times conj(f'), and the tangent
times f'). Equality
is exact: the difference must simplify to zero ("simplify"), or, where that
is too slow, be zero to 50 digits at several random rational points
("rational points"). An iterative algorithm (a factorization), which cannot
run on symbols, is checked on 50-digit numbers instead ("high-precision
points": the jvp against a central difference, the vjp as its adjoint; see
``_check_points``). Non-differentiable primitives must give MLX's zeros
("zero rule"), and those MLX gives no rule at all must raise its error
("no rule"). The forward result is also compared with the numeric engine at
a random point. ``mlxref check-rules`` prints the table.

The cases live in one module per primitive family, beside this one.
"""

import importlib
import inspect
import math
import pkgutil
import random
from dataclasses import dataclass

import mpmath
import sympy

from .. import core as mx
from ..core import primitives
from ..core.primitives.base import Primitive

DOMAINS = {
    # name: (SymPy assumptions, interval random points are drawn from)
    "real": ({"real": True}, (-2, 2)),
    "positive": ({"positive": True}, (sympy.Rational(1, 4), 3)),
    "unit": ({"real": True}, (sympy.Rational(-3, 4), sympy.Rational(3, 4))),
    "above_one": ({"real": True}, (sympy.Rational(5, 4), 3)),
    # complex64 elements x + I y, with x and y real and drawn from the interval
    "complex": ({"real": True}, (-2, 2)),
}
COMPLEX_DOMAINS = frozenset({"complex"})


@dataclass
class Case:
    """A program using ``primitive``, checked on symbolic inputs of ``shapes``."""

    primitive: type
    build: object  # (*arrays) -> array, written with mlxref ops
    shapes: tuple
    domain: str = "real"
    zero: bool = False  # MLX's rule for it is a zero gradient
    raises: bool = False  # MLX has no vjp or jvp for it: both raise MLX's error
    no_vmap: bool = False  # nor vmap (with ``raises``): it raises MLX's error too
    # MLX's error for a rule it does not have: Primitive's default, unless the
    # primitive throws its own (Compiled's "[Compiled] Cannot vjp primitive.").
    error: tuple = (ValueError, "[Primitive::{mode}] Not implemented for {name}")
    note: str = ""
    points: bool = False  # an iterative algorithm: checked at "high-precision points"


@dataclass
class Result:
    primitive: str
    forward: bool
    vjp: bool
    jvp: bool
    method: str
    detail: str = ""
    cases: int = 1
    vmap: bool = True

    @property
    def ok(self):
        return self.forward and self.vjp and self.jvp and self.vmap


def symbol_lists(prefix, shapes, assumptions):
    """One list of fresh SymPy symbols per shape, named ``{prefix}a0, {prefix}a1...``
    for the first, ``{prefix}b0...`` for the second."""
    out = []
    for k, shape in enumerate(shapes):
        name = prefix + "abcdefgh"[k]
        out.append([sympy.Symbol(f"{name}{i}", **assumptions) for i in range(math.prod(shape))])
    return out


def case_inputs(prefix, shapes, domain):
    """A case's symbolic inputs: per input, its elements and the real symbols
    each element is made of, ``(x,)`` or, in a complex domain, ``(x, y)`` for
    ``x + I y``."""
    assumptions = DOMAINS[domain][0]
    if domain not in COMPLEX_DOMAINS:
        groups = symbol_lists(prefix, shapes, assumptions)
        return groups, [[(x,) for x in group] for group in groups]
    xs = symbol_lists(prefix + "x_", shapes, assumptions)
    ys = symbol_lists(prefix + "y_", shapes, assumptions)
    parts = [list(zip(gx, gy)) for gx, gy in zip(xs, ys)]
    return [[x + sympy.I * y for x, y in group] for group in parts], parts


def sym_array(symbols, shape, dtype=None):
    """An evaluated array of ``shape`` holding ``symbols`` (float64 unless ``dtype``)."""
    a = mx.array(list(symbols), dtype or mx.float64).reshape(shape)
    mx.eval(a)  # evaluated, so it is a leaf, like the data a case's program receives
    return a


def input_dtype(domain):
    """The dtype of a case's inputs: complex64 in a complex domain, else float64."""
    return mx.complex64 if domain in COMPLEX_DOMAINS else mx.float64


def _re_conj_times(c, d, real):
    """Re(conj(c) d), written without ``re`` (which SymPy may not reduce);
    just c d when the output is real (then c and d, a derivative of a real
    function by a real symbol, are both real)."""
    if real:
        return c * d
    return (sympy.conjugate(c) * d + c * sympy.conjugate(d)) / 2


def _exact(expr):
    """Turn the float constants a rule used (0.5, 2/sqrt(pi), log(2)...) exact."""
    expr = sympy.sympify(expr)
    floats = expr.atoms(sympy.Float)
    if not floats:
        return expr
    return expr.xreplace({f: _exact_float(f) for f in floats})


# _exact_float's answers, by the Float's value and precision: the rules use a few
# constants in thousands of elements, and each nsimplify takes a tenth of a second.
_EXACT_FLOATS = {}


def _exact_float(f):
    """The shortest exact number among plain, pi, log(2) and log(10) forms of ``f``."""
    key = (f._mpf_, f._prec)
    if key not in _EXACT_FLOATS:
        _EXACT_FLOATS[key] = _nsimplest(f)
    return _EXACT_FLOATS[key]


def _nsimplest(f):
    candidates = [sympy.nsimplify(f)] + [
        sympy.nsimplify(f, [c]) for c in (sympy.pi, sympy.log(2), sympy.log(10))
    ]
    exact = [c for c in candidates if not c.atoms(sympy.Float)]
    return min(exact, key=lambda c: len(str(c))) if exact else f


def exact_elements(a):
    """The elements of ``a``, evaluated, with the float constants a rule used made exact."""
    mx.eval(a)
    return [_exact(as_number(v)) for v in a.data()]


def as_number(v):
    """SymPy's true/false (from a comparison) as 1/0, so it can be compared."""
    if v is sympy.true or v is True:
        return 1
    if v is sympy.false or v is False:
        return 0
    return v


class _Compare:
    """Decides equality of expression lists; remembers which method it needed."""

    def __init__(self, symbols, domain, rng, simplify=True):
        self.symbols = symbols
        self.lo, self.hi = DOMAINS[domain][1]
        self.rng = rng
        self.simplify = simplify  # else rational points decide what expand does not
        self.method = "simplify"
        self.why = ""  # the first difference ``equal`` found: which element, both values

    def _point(self):
        span = self.hi - self.lo
        return {
            s: self.lo + span * sympy.Rational(self.rng.randint(1, 999), 1000)
            for s in self.symbols
        }

    def equal(self, got, expected):
        """Whether the lists are equal; if not, ``self.why`` says where and how."""
        if len(got) != len(expected):
            self.why = f"expected {len(expected)} elements, received {len(got)}"
            return False
        for i, (g, e) in enumerate(zip(got, expected)):
            if not self._same(g, e):
                self.why = f"element {i}: expected {_shown(e)}, received {_shown(g)}"
                return False
        return True

    def _same(self, g, e):
        diff = sympy.sympify(g - e)
        if diff == 0 or sympy.expand(diff) == 0:
            return True
        # (simplify is slow on Piecewise, from a rule's comparisons: points decide.)
        if (self.simplify and sympy.count_ops(diff) < 120 and not diff.has(sympy.Piecewise)
                and sympy.simplify(diff) == 0):
            return True
        self.method = "rational points"
        if not self.simplify:
            return self._zero_by_mpmath(diff)
        for _ in range(4):
            value = diff.subs(self._point()).evalf(50)
            if not value.is_number or abs(value) > sympy.Float("1e-40", 50):
                return False
        return True

    def _zero_by_mpmath(self, diff):
        """``diff`` is zero to 50 digits at 4 random rational points, evaluated
        with mpmath (SymPy's exact arithmetic on powers of complex numbers,
        which the complex cases are full of, is slow)."""
        try:
            f = sympy.lambdify(self.symbols, diff, modules="mpmath")
            for _ in range(4):
                point = self._point()
                with mpmath.workdps(50):
                    value = f(*(mpmath.mpf(point[s].p) / point[s].q for s in self.symbols))
                    if not abs(value) <= mpmath.mpf("1e-40"):
                        return False
        except Exception:  # noqa: BLE001 - something that is not a number at the point
            return False
        return True


def _shown(value, limit=200):
    """An expression as check-rules prints it: simplified where that is quick, cut at
    ``limit`` characters."""
    text = str(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def describe(case):
    """A case in one line: its program (the source of a lambda, else the function's
    name), its inputs' shapes and domain."""
    build = getattr(case.build, "__name__", repr(case.build))
    if build == "<lambda>":
        try:
            source = inspect.getsource(case.build).strip()
            start = source.index("lambda")
            build = source[start:].rstrip(",)")
        except (OSError, TypeError, ValueError):
            pass
    shapes = ", ".join(str(tuple(s)) for s in case.shapes)
    return f"{build} on {shapes} ({case.domain})" + (f", {case.note}" if case.note else "")


def check_case(case, seed=0):
    """Run one case: a Result for it (a case that raises is a failure, with its message)."""
    try:
        result = (_check_points if case.points else _check_case)(case, seed)
    except Exception as e:  # noqa: BLE001 - the table reports it
        return Result(case.primitive.__name__, False, False, False, "-",
                      f"{type(e).__name__}: {e}", vmap=False)
    why = []
    try:
        result.vmap = (check_vmap_points if case.points else check_vmap)(case, why=why)
        if why:
            result.detail = (result.detail + "; " if result.detail else "") + why[0]
    except Exception as e:  # noqa: BLE001
        result.vmap = False
        result.detail = (result.detail + "; " if result.detail else "") + (
            f"vmap: {type(e).__name__}: {e}"
        )
    return result


def check_vmap(case, batch=2, why=None):
    """vmap of the case's program equals a stack of its per-example results.

    Checked for every input alone on every batch-axis position it can take,
    and for all inputs batched on axis 0; inputs that are not batched are
    shared by every example. Elements are SymPy symbols, so the per-example
    expressions must come out of the batched program exactly. A failure appends
    one line to ``why`` (a list): the in_axes, the example, both values.
    """
    dtype = input_dtype(case.domain)
    examples = [
        [sym_array(s, shape, dtype)
         for s, shape in zip(case_inputs(f"v{b}", case.shapes, case.domain)[0], case.shapes)]
        for b in range(batch)
    ]
    n = len(case.shapes)
    if case.no_vmap:  # every input batched on axis 0 must raise MLX's error
        batched = [mx.stack([examples[b][j] for b in range(batch)]) for j in range(n)]
        return _not_implemented(lambda: mx.vmap(case.build)(*batched), "vmap", case, why)
    configs = [[ax if j == i else None for j in range(n)]
               for i in range(n) for ax in range(len(case.shapes[i]) + 1)]
    if n > 1:
        configs.append([0] * n)
    for in_axes in configs:
        batched = [
            examples[0][j] if ax is None else mx.stack([examples[b][j] for b in range(batch)], ax)
            for j, ax in enumerate(in_axes)
        ]
        got = mx.vmap(case.build, in_axes=tuple(in_axes))(*batched)
        for b in range(batch):
            inputs = [examples[b if ax is not None else 0][j] for j, ax in enumerate(in_axes)]
            want = case.build(*inputs)
            if got.shape != (batch,) + want.shape:
                return _vmap_failed(why, in_axes, f"expected shape {(batch,) + want.shape}, "
                                                  f"received {got.shape}")
            for i, (g, w) in enumerate(zip(exact_elements(got[b]), exact_elements(want))):
                if g != w and sympy.simplify(g - w) != 0:
                    return _vmap_failed(why, in_axes, f"example {b} element {i}: expected "
                                                      f"{_shown(w)}, received {_shown(g)}")
    return True


def _vmap_failed(why, in_axes, what):
    if why is not None:
        why.append(f"vmap: in_axes {tuple(in_axes)}: {what}")
    return False


def _check_case(case, seed):
    rng = random.Random(seed)
    dtype = input_dtype(case.domain)
    xs, parts = case_inputs("", case.shapes, case.domain)
    inputs = [sym_array(s, shape, dtype) for s, shape in zip(xs, case.shapes)]
    out = case.build(*inputs)
    if not _uses(out, case.primitive):
        return Result(case.primitive.__name__, False, False, False, "-",
                      "the case's program does not use the primitive")
    f = exact_elements(out)
    flat_x = [s for group in parts for element in group for s in element]
    # simplify is slow on the conjugates of complex cases; rational points decide there.
    complex_out = out.dtype is mx.complex64
    cmp = _Compare(flat_x, case.domain, rng, simplify=dtype is not mx.complex64 and not complex_out)

    # forward: the symbolic result agrees with the numeric engine at a point
    point = cmp._point()
    if dtype is mx.complex64:
        # The inputs are stored as complex64: compare at the point they hold.
        point = {s: sympy.Rational(mx.float32.cast(float(v))) for s, v in point.items()}
    numeric_inputs = [
        mx.array([complex(e.subs(point)) if dtype is mx.complex64 else float(point[e])
                  for e in group], dtype).reshape(shape)
        for group, shape in zip(xs, case.shapes)
    ]
    numeric = case.build(*numeric_inputs)
    want = [sympy.sympify(as_number(sympy.sympify(v).subs(point))).evalf(30) for v in f]
    got = numeric.reshape(-1).tolist() if numeric.ndim else [numeric.item()]
    # A float32 or float16 output holds its value rounded to the dtype.
    tol = max(1e-9, 4 * mx.finfo(numeric.dtype).eps) if numeric.dtype.is_inexact else 1e-9
    forward, why = True, []
    for i, (w, g) in enumerate(zip(want, got)):
        # (equal first: an infinite element, such as an exclusive cummax's first, is itself)
        if not (complex(w) == complex(g)
                or abs(complex(w) - complex(g)) <= tol * (1 + abs(complex(w)))):
            forward = False
            why.append(f"forward: element {i} at {_shown(point)}: expected {_shown(w)}, "
                       f"received {_shown(g)}")
            break

    # Cotangents u (u + I w for a complex output) and tangents t (p + I q).
    (c_syms,) = symbol_lists("u", [out.shape], {"real": True})
    if complex_out:
        (w_syms,) = symbol_lists("w", [out.shape], {"real": True})
        c_syms = [u + sympy.I * w for u, w in zip(c_syms, w_syms)]
    cot = sym_array(c_syms, out.shape, out.dtype if complex_out else None)
    t_parts = [[tuple(sympy.Symbol(f"t{s}", real=True) for s in element) for element in group]
               for group in parts]
    units = (1, sympy.I)  # an element's parts: x, or x + I y
    t_syms = [[sum((u * t for u, t in zip(units, element)), sympy.Integer(0))
               for element in group] for group in t_parts]
    tangents = [sym_array(s, shape, dtype) for s, shape in zip(t_syms, case.shapes)]
    if case.raises:
        vjp_ok = _not_implemented(lambda: mx.vjp(case.build, inputs, [cot]), "vjp", case, why)
        jvp_ok = _not_implemented(lambda: mx.jvp(case.build, inputs, tangents), "jvp", case,
                                  why)
        return Result(case.primitive.__name__, forward, vjp_ok, jvp_ok, "no rule",
                      "; ".join(why))
    _, vjps = mx.vjp(case.build, inputs, [cot])
    got_vjp = [exact_elements(v) for v in vjps]
    _, (jvp_out,) = mx.jvp(case.build, inputs, tangents)
    got_jvp = exact_elements(jvp_out)

    if case.zero:
        vjp_ok = all(cmp.equal(g, [0] * len(g)) or why.append(f"vjp: input {k} {cmp.why}")
                     for k, g in enumerate(got_vjp))
        jvp_ok = cmp.equal(got_jvp, [0] * len(got_jvp)) or why.append(f"jvp: {cmp.why}")
        return Result(case.primitive.__name__, forward, vjp_ok, bool(jvp_ok), "zero rule",
                      "; ".join(why))

    real = not complex_out
    # Rational points give every symbol a value: cotangents' and tangents' too.
    cmp.symbols = flat_x + sorted(
        (set().union(*(sympy.sympify(c).free_symbols for c in c_syms))
         | {t for group in t_parts for element in group for t in element}),
        key=str,
    )
    expected_vjp = [
        [sum((u * sum((_re_conj_times(c, _diff(fj, x), real) for c, fj in zip(c_syms, f)),
                      sympy.Integer(0))
              for u, x in zip(units, element)), sympy.Integer(0))
         for element in group]
        for group in parts
    ]
    flat_t = [t for group in t_parts for element in group for t in element]
    expected_jvp = [
        sum((_diff(fj, x) * t for x, t in zip(flat_x, flat_t)), sympy.Integer(0)) for fj in f
    ]
    vjp_ok = all(cmp.equal(g, e) or why.append(f"vjp: input {k} {cmp.why}")
                 for k, (g, e) in enumerate(zip(got_vjp, expected_vjp)))
    jvp_ok = cmp.equal(got_jvp, expected_jvp) or why.append(f"jvp: {cmp.why}")
    return Result(case.primitive.__name__, forward, vjp_ok, bool(jvp_ok), cmp.method,
                  "; ".join(why))


# --- "high-precision points": the rules of iterative algorithms ---------------------
#
# A factorization (QR, SVD, eigh) loops until its result is accurate, which
# it cannot do on symbols. Such a case runs on numbers of 50 digits instead
# (SymPy Floats, which the arrays hold as they hold any SymPy expression): at
# a random point x, with a random tangent t and cotangent u,
#
# - the jvp must equal the central difference (f(x + h t) - f(x - h t)) / 2h
#   for h = 10^-20 (its error, of order h² times the third derivative plus
#   the 50-digit rounding over h, is below 10^-25), and
# - the vjp must be its adjoint, <u, J t> = <Jᵀ u, t>, to 10^-30.
#
# The forward result is compared with the float64 engine at the point, and
# vmap with the per-example results on float64 inputs.

_DIGITS = 50


def _float_point(rng, shapes, domain):
    """Random inputs of ``shapes`` (lists of 50-digit Floats) from the domain."""
    lo, hi = DOMAINS[domain][1]
    return [[sympy.Float(lo + (hi - lo) * sympy.Rational(rng.randint(1, 999), 1000), _DIGITS)
             for _ in range(math.prod(shape))] for shape in shapes]


def _run(build, values, shapes):
    out = build(*(sym_array(v, shape) for v, shape in zip(values, shapes)))
    mx.eval(out)
    return list(out.data())


def _dot(xs, ys):
    return sum((x * y for x, y in zip(xs, ys)), sympy.Integer(0))


def _close(got, want, tol):
    scale = 1 + max((abs(w) for w in want), default=0)
    return len(got) == len(want) and all(abs(g - w) <= tol * scale for g, w in zip(got, want))


def _check_points(case, seed):
    rng = random.Random(seed)
    name = case.primitive.__name__
    x = _float_point(rng, case.shapes, case.domain)
    inputs = [sym_array(v, shape) for v, shape in zip(x, case.shapes)]
    out = case.build(*inputs)
    if not _uses(out, case.primitive):
        return Result(name, False, False, False, "-",
                      "the case's program does not use the primitive")
    mx.eval(out)
    f = list(out.data())
    numeric = case.build(*(mx.array([float(e) for e in v], mx.float64).reshape(shape)
                           for v, shape in zip(x, case.shapes)))
    forward = _close(numeric.reshape(-1).tolist(), f, 1e-9)
    why = [] if forward else [f"forward: expected {_shown([float(v) for v in f])}, "
                              f"received {_shown(numeric.reshape(-1).tolist())}"]
    t = _float_point(rng, case.shapes, "real")
    (u,) = _float_point(rng, [out.shape], "real")
    tangents = [sym_array(v, shape) for v, shape in zip(t, case.shapes)]
    cot = sym_array(u, out.shape)
    if case.raises:
        vjp_ok = _not_implemented(lambda: mx.vjp(case.build, inputs, [cot]), "vjp", case, why)
        jvp_ok = _not_implemented(lambda: mx.jvp(case.build, inputs, tangents), "jvp", case,
                                  why)
        return Result(name, forward, vjp_ok, jvp_ok, "no rule", "; ".join(why))
    _, vjps = mx.vjp(case.build, inputs, [cot])
    _, (jvp_out,) = mx.jvp(case.build, inputs, tangents)
    mx.eval(jvp_out, *vjps)
    jt = list(jvp_out.data())
    h = sympy.Float("1e-20", _DIGITS)
    plus = _run(case.build, [[a + h * b for a, b in zip(xs, ts)] for xs, ts in zip(x, t)],
                case.shapes)
    minus = _run(case.build, [[a - h * b for a, b in zip(xs, ts)] for xs, ts in zip(x, t)],
                 case.shapes)
    difference = [(p - m) / (2 * h) for p, m in zip(plus, minus)]
    jvp_ok = _close(jt, difference, 1e-20)
    left = _dot(u, jt)
    right = sum((_dot(list(g.data()), ts) for g, ts in zip(vjps, t)), sympy.Integer(0))
    vjp_ok = jvp_ok and abs(left - right) <= 1e-30 * (1 + abs(left))
    if not jvp_ok:
        why.append(f"jvp: expected the central difference {_shown([float(v) for v in difference])}"
                   f", received {_shown([float(v) for v in jt])}")
    elif not vjp_ok:
        why.append(f"vjp: <u, jvp> = <vjp, t> expected {float(left)!r}, received {float(right)!r}")
    return Result(name, forward, vjp_ok, jvp_ok, "high-precision points", "; ".join(why))


def check_vmap_points(case, batch=2, seed=0, why=None):
    """``check_vmap`` for a "high-precision points" case: float64 inputs, and
    the batched results equal to the per-example ones to 1e-12."""
    rng = random.Random(seed + 1)
    lo, hi = DOMAINS[case.domain][1]
    examples = [[mx.array([float(lo + (hi - lo) * rng.random()) for _ in range(math.prod(s))],
                          mx.float64).reshape(s) for s in case.shapes] for _ in range(batch)]
    n = len(case.shapes)
    configs = [[ax if j == i else None for j in range(n)]
               for i in range(n) for ax in range(len(case.shapes[i]) + 1)]
    for in_axes in configs:
        batched = [examples[0][j] if ax is None else
                   mx.stack([examples[b][j] for b in range(batch)], ax)
                   for j, ax in enumerate(in_axes)]
        got = mx.vmap(case.build, in_axes=tuple(in_axes))(*batched)
        for b in range(batch):
            want = case.build(*[examples[b if ax is not None else 0][j]
                                for j, ax in enumerate(in_axes)])
            if got.shape != (batch,) + want.shape or not _close(
                    got[b].reshape(-1).tolist(), want.reshape(-1).tolist(), 1e-12):
                return _vmap_failed(why, in_axes, f"example {b}: expected "
                                    f"{_shown(want.tolist())}, received {_shown(got[b].tolist())}")
    return True


def _not_implemented(run, mode, case, why=None):
    """Does ``run`` raise MLX's error (``case.error``) for a rule the primitive does
    not have? If not, and ``why`` is a list, one line saying what it did instead."""
    kind, message = case.error
    expected = message.format(mode=mode, name=case.primitive.__name__)
    try:
        run()
    except kind as e:
        # The name may carry the primitive's parameters (MLX's "View int32").
        if str(e) == expected + "." or (str(e).startswith(expected + " ")
                                        and str(e).endswith(".")):
            return True
        received = f"{type(e).__name__}: {e}"
    else:
        received = "no error (a rule ran)"
    if why is not None:
        why.append(f"{mode}: expected {kind.__name__}: {expected}., received {received}")
    return False


def _diff(f, x):
    """``sympy.diff``, with the derivative of floor and ceiling taken as 0.

    They are piecewise constant, so their derivative is 0 wherever it exists;
    SymPy leaves it unevaluated (as in remainder's a - b * floor(a / b)).
    """
    d = sympy.diff(f, x)
    return d.replace(
        lambda e: isinstance(e, (sympy.Derivative, sympy.Subs))
        and e.has(sympy.floor, sympy.ceiling),
        lambda e: sympy.Integer(0),
    )


def _uses(out, primitive):
    """Whether the graph behind ``out`` contains a node of ``primitive``."""
    stack, seen = [out], set()
    while stack:
        a = stack.pop()
        if id(a) in seen:
            continue
        seen.add(id(a))
        if isinstance(a.primitive(), primitive):
            return True
        stack.extend(a.inputs())
    return False


def all_cases():
    from . import cases  # a loop: the case modules import Case from this one

    return cases.CASES


def all_primitives():
    """Every concrete Primitive subclass mlxref defines (abstract bases excluded)."""
    for info in pkgutil.iter_modules(primitives.__path__):
        importlib.import_module(f"{primitives.__name__}.{info.name}")
    found, stack = [], list(Primitive.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if not cls.__dict__.get("abstract", False) and cls not in found:
            found.append(cls)
    return sorted(found, key=lambda c: c.__name__)


# Primitives the check cannot run, by name, and why: a collective needs a group
# of processes to evaluate (its rules are tested on an in-process group in
# tests/core/distributed/test_collectives.py); a custom kernel is Metal source,
# which only a GPU runs, and has no rules (tests/core/test_metal_kernel.py).
SKIPPED = {name: "skipped: a collective needs a group of processes"
           for name in ("AllGather", "AllReduce", "ReduceScatter", "Recv", "Send")}
SKIPPED["CustomKernel"] = "skipped: Metal source, which only a GPU runs; no rules"


def check_all(seed=0, primitives=None):
    """One Result per primitive (cases of the same primitive combined): of
    ``primitives``, or of every one (``all_primitives()``)."""
    by_primitive = {}
    for case in all_cases():
        by_primitive.setdefault(case.primitive, []).append(case)
    results = []
    for prim in all_primitives() if primitives is None else primitives:
        cases = by_primitive.get(prim)
        if not cases and prim.__name__ in SKIPPED:
            results.append(Result(prim.__name__, True, True, True, "-", SKIPPED[prim.__name__]))
            continue
        if not cases:
            results.append(Result(prim.__name__, False, False, False, "-", "no symbolic check"))
            continue
        rs = [check_case(c, seed) for c in cases]
        for k, (c, r) in enumerate(zip(cases, rs), 1):
            if r.detail:
                r.detail = f"case {k} ({describe(c)}): {r.detail}"
        methods = sorted({r.method for r in rs})
        results.append(
            Result(
                prim.__name__,
                all(r.forward for r in rs),
                all(r.vjp for r in rs),
                all(r.jvp for r in rs),
                ", ".join(methods),
                "; ".join(r.detail for r in rs if r.detail),
                len(rs),
                all(r.vmap for r in rs),
            )
        )
    return results


def format_table(results):
    def mark(ok):
        return "ok" if ok else "FAIL"

    rows = [("primitive", "cases", "forward", "vjp", "jvp", "vmap", "method")]
    for r in results:
        rows.append((r.primitive, str(r.cases), mark(r.forward), mark(r.vjp), mark(r.jvp),
                     mark(r.vmap), r.method + (f"  ({r.detail})" if r.detail else "")))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    lines = []
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row[:6], widths)) + "  " + row[6])
    return "\n".join(line.rstrip() for line in lines)
