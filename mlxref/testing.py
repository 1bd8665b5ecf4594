"""``check_grads``: numerical checks of derivatives, in the manner of HIPS autograd.

Two independent checks, each recursing to the requested order:

- **Finite differences.** In a random direction ``v``, the central difference
  ``(f(x + eps v) - f(x - eps v)) / (2 eps)`` must match the forward-mode
  product ``J v`` (``mx.jvp``), and ``<u, J v>`` must match ``<Jᵀ u, v>`` from
  reverse mode (``mx.vjp``) for a random ``u``.
- **Forward against reverse.** ``<u, J v> = <Jᵀ u, v>``: the two modes must agree
  with each other, not just with the differences.

All checks of one order run before anything is raised, and the message lists
every one that disagreed, so the pattern tells which rule is wrong.

For order 2 and up, the same checks run on the functions ``x -> J(x) v`` and
``x -> Jᵀ(x) u``, so Hessian-vector products are checked too. mlxref computes
in float64 (the arguments are cast to it), so central differences are
accurate to about 1e-9.
"""

import random as _random

from . import core as mx


def check_grads(f, args, order=2, modes=("fwd", "rev"), eps=1e-5, rtol=1e-4, atol=1e-6, seed=0):
    """Raise AssertionError, naming what failed, unless ``f``'s derivatives check out.

    ``f`` takes the arrays in ``args`` positionally and returns one array.
    ``modes`` is a sequence of ``"fwd"`` and ``"rev"`` (a single string is one
    mode). Every check at an order runs before the error is raised, so the
    message lists all that disagree: a wrong jvp rule shows up both against
    the differences and against reverse mode, while reverse mode alone passes.

    >>> import mlxref.core as mx
    >>> from mlxref.testing import check_grads
    >>> check_grads(lambda x: mx.sin(x) * mx.exp(x), [mx.array([0.5, 1.0])])
    """
    if isinstance(modes, str):
        modes = (modes,)
    modes = tuple(modes)
    unknown = [m for m in modes if m not in ("fwd", "rev")]
    if unknown or not modes:
        raise ValueError(
            f"check_grads: modes must be a non-empty sequence of 'fwd' and 'rev', got {modes!r}"
        )
    rng = _random.Random(seed)
    args = [mx.array(a) if not isinstance(a, mx.array) else a for a in args]
    _check(f, args, order, modes, eps, rtol, atol, rng, getattr(f, "__name__", "f"), 1)


def _random_like(a, rng):
    return mx.array([rng.gauss(0.0, 1.0) for _ in range(a.size)], mx.float64).reshape(a.shape)


def _dot(xs, ys):
    """Sum over a list of array pairs of the elementwise product, as a float."""
    total = 0.0
    for x, y in zip(xs, ys):
        total += sum(float(p) * float(q) for p, q in zip(_flat(x), _flat(y)))
    return total


def _flat(a):
    return a.reshape(-1).tolist() if a.ndim else [a.item()]


def _close(expected, received, rtol, atol):
    return abs(expected - received) <= atol + rtol * abs(expected)


def _fail(failures, name, level, args):
    """One AssertionError listing every check that disagreed at this order."""
    blocks = [
        f"check_grads: {what} of {name} (order {level}) disagree.\n"
        f"  arguments: {[a.tolist() for a in args]}\n"
        f"  expected: {expected}\n"
        f"  received: {received}"
        for what, expected, received in failures
    ]
    raise AssertionError("\n".join(blocks))


def _check(f, args, order, modes, eps, rtol, atol, rng, name, level):
    """Check derivative ``level`` of the original function (``f`` is already
    ``level - 1`` derivatives deep), then recurse while ``order`` remains."""
    if order < 1:
        return
    # In float64, as HIPS autograd checks: a float32 central difference would
    # only be good to about 1e-3.
    args = [a if a.dtype in (mx.float64, mx.complex64) else a.astype(mx.float64) for a in args]
    v = [_random_like(a, rng) for a in args]
    out = f(*args)
    u = _random_like(out, rng)

    plus = f(*[a + eps * t for a, t in zip(args, v)])
    minus = f(*[a - eps * t for a, t in zip(args, v)])
    numeric = (plus - minus) / (2 * eps)
    u_numeric = _dot([u], [numeric])

    failures = []
    fwd = rev = None
    if "fwd" in modes:
        _, (jv,) = mx.jvp(f, args, v)
        fwd = _dot([u], [jv])
        if not _close(u_numeric, fwd, rtol, atol):
            failures.append(("forward mode (jvp) and finite differences", u_numeric, fwd))
    if "rev" in modes:
        _, vjps = mx.vjp(f, args, [u])
        rev = _dot(vjps, v)
        if not _close(u_numeric, rev, rtol, atol):
            failures.append(("reverse mode (vjp) and finite differences", u_numeric, rev))
    if fwd is not None and rev is not None and not _close(fwd, rev, rtol, atol):
        failures.append(("<u, J v> (jvp) and <J^T u, v> (vjp)", fwd, rev))
    if failures:
        _fail(failures, name, level, args)

    if order > 1:
        if "fwd" in modes:

            def jvp_of_f(*xs):
                return mx.jvp(f, list(xs), v)[1][0]

            _check(jvp_of_f, args, order - 1, modes, eps, rtol, atol, rng, f"jvp({name})",
                   level + 1)
        if "rev" in modes:

            def vjp_of_f(*xs):
                grads = mx.vjp(f, list(xs), [u])[1]
                return _concat_flat(grads)

            _check(vjp_of_f, args, order - 1, modes, eps, rtol, atol, rng, f"vjp({name})",
                   level + 1)


def _concat_flat(arrays):
    return mx.concatenate([a.reshape(-1) for a in arrays]) if len(arrays) > 1 else arrays[0]
