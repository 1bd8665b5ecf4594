"""``mx.grad`` and ``mx.value_and_grad``: reverse mode for scalar functions of trees.

Read alongside: mlx/transforms.cpp ``value_and_grad`` and python/src/
transforms.cpp ``py_value_and_grad`` (argnums, argnames, trees, messages).

Both are built on ``vjp``: the differentiated arguments (nested lists,
tuples and dicts of arrays) are flattened to a list of primals, the function
is called on trees rebuilt from the tracers, every output after the first is
put behind ``stop_gradient``, and the first is seeded with a cotangent of one.
Gradients come back in the structure of the arguments they belong to.
"""

import functools

from .. import ops
from ..array import array
from ..dtypes import float32
from ..convert import scalar_array
from ..ops.common import incompatible_arguments, is_int
from . import trees
from .vjp import vjp

_SIGNATURE = (
    "{}(fun: Callable[P, R], argnums: int | Sequence[int] | None = None, "
    "argnames: str | Sequence[str] = []) -> {}"
)


def value_and_grad(fun, argnums=None, argnames=[]):  # noqa: B006 (MLX's signature)
    """Return a function computing ``(fun(*args, **kwargs), gradients)``.

    ``fun`` returns a scalar array, or a tuple whose first element is one (the
    rest, "aux", can be anything and is returned untouched but not
    differentiated). With one argnum the gradient is bare; with several it is
    a tuple in sorted argnum order; with ``argnames`` it is
    ``(positional, {name: gradient})``.

    >>> import mlxref.core as mx
    >>> mx.value_and_grad(lambda x: (x * x).sum())(mx.array([1.0, 2.0]))
    (array(5, dtype=float32), array([2, 4], dtype=float32))
    """
    return _make(fun, argnums, argnames, "value_and_grad", scalar_only=False)


def grad(fun, argnums=None, argnames=[]):  # noqa: B006
    """Return a function computing the gradient of the scalar function ``fun``.

    >>> import mlxref.core as mx
    >>> mx.grad(lambda x: mx.sin(x) * mx.exp(x))(mx.array(0.5))
    array(2.23733, dtype=float32)
    """
    vag = _make(fun, argnums, argnames, "grad", scalar_only=True)

    @functools.wraps(fun)
    def gradient(*args, **kwargs):
        return vag(*args, **kwargs)[1]

    return gradient


def _validate(fun, argnums, argnames, name):
    """argnums and argnames as MLX normalises them when the transform is made."""
    sequence = (list, tuple)
    if not (
        callable(fun)
        and (argnums is None or is_int(argnums)
             or (isinstance(argnums, sequence) and all(is_int(a) for a in argnums)))
        and (isinstance(argnames, str)
             or (isinstance(argnames, sequence) and all(isinstance(n, str) for n in argnames)))
    ):
        returns = "Callable[P, Any]" if name == "grad" else "Callable[P, tuple[R, Any]]"
        optional = {"argnums": argnums} if argnums is not None else {}
        if not isinstance(argnames, sequence) or argnames:
            optional["argnames"] = argnames
        raise incompatible_arguments(_SIGNATURE.format(name, returns), [fun], optional)
    tag = f"[{name}]"
    argnames = [argnames] if isinstance(argnames, str) else list(argnames)
    if argnums is None:
        argnums = [] if argnames else [0]
    elif is_int(argnums):
        argnums = [int(argnums)]
    else:
        argnums = sorted(int(a) for a in argnums)
    for a in argnums:
        if a < 0:
            raise ValueError(f"{tag} Can't compute the gradient of negative argument index {a}")
    for prev, cur in zip(argnums, argnums[1:]):
        if prev == cur:
            # MLX's message names argnums[0], whichever index repeats.
            raise ValueError(f"{tag} Duplicate argument index {argnums[0]} is not allowed.")
    if not argnums and not argnames:
        raise ValueError(f"{tag} Gradient wrt no argument requested")
    return argnums, argnames


def _make(fun, argnums, argnames, name, scalar_only):
    argnums, argnames = _validate(fun, argnums, argnames, name)
    tag = f"[{name}]"

    @functools.wraps(fun)
    def value_and_gradient(*args, **kwargs):
        for a in argnums:
            if a >= len(args):
                raise ValueError(
                    f"{tag} Can't compute the gradient of argument index {a} because "
                    f"the function is called with only {len(args)} positional arguments."
                )
        for key in argnames:
            if key not in kwargs:
                listed = "".join(f"{k}," for k in kwargs)
                raise ValueError(
                    f"{tag} Can't compute the gradient of keyword argument '{key}' because "
                    f"the function is called with the following keyword arguments {{{listed}}}"
                )

        # Every array leaf of the arguments, in order; the differentiated
        # arguments must hold nothing but arrays.
        wrt = [args[a] for a in argnums] + [kwargs[n] for n in argnames]
        for t in wrt:
            trees.flatten(t)  # MLX's strict check
        tree = [list(args), dict(kwargs)]
        originals = trees.arrays(tree)
        grad_positions = _grad_positions(args, kwargs, argnums, argnames)
        primals = [originals[i] for i in grad_positions]

        value = []

        def flat_fun(*tracers):
            # MLX's tree_fill: the tracers go into the caller's own lists and
            # dicts (tuples are rebuilt), so an assignment the function makes
            # there stays after the call.
            filled = list(originals)
            for i, t in zip(grad_positions, tracers):
                filled[i] = t
            trees.fill(tree, filled)
            out = fun(*tree[0], **tree[1])
            # Put the originals back where the function left a tracer in place.
            _restore(tree, filled, originals)
            value.append(out)
            loss = _check_output(out, tag, scalar_only)
            aux = trees.arrays(out[1:]) if isinstance(out, tuple) else []
            return [loss] + [ops.stop_gradient(x) for x in aux]

        # Seed with a float32 one; vjp casts it to the output's dtype, as in MLX.
        _, flat_grads = vjp(flat_fun, primals, [scalar_array(1.0, float32)])

        it = iter(flat_grads)
        grads = [trees.unflatten(t, it) for t in wrt]  # in the arguments' first shape
        positional = grads[: len(argnums)]
        positional = positional[0] if len(positional) == 1 else tuple(positional)
        if argnames:
            named = dict(zip(argnames, grads[len(argnums) :]))
            return value[0], (positional if argnums else None, named)
        return value[0], positional

    return value_and_gradient


def _grad_positions(args, kwargs, argnums, argnames):
    """Where the differentiated arguments' arrays sit among all the array leaves
    of ``[args, kwargs]`` (MLX's ``gradient_indices``), in argnums then argnames order."""
    starts, count = {}, 0
    for i, a in enumerate(args):
        starts[i] = (count, len(trees.arrays(a)))
        count += starts[i][1]
    for k, v in kwargs.items():
        starts[k] = (count, len(trees.arrays(v)))
        count += starts[k][1]
    positions = []
    for key in list(argnums) + list(argnames):
        start, n = starts[key]
        positions.extend(range(start, start + n))
    return positions


def _restore(tree, filled, originals):
    """Each leaf still holding what ``trees.fill`` put there gets its original back;
    a location the function wrote to keeps what it wrote (MLX compares ids)."""
    it = iter(zip(filled, originals))

    def visit(leaf):
        put, original = next(it, (None, None))
        return original if put is not None and leaf.id() == put.id() else leaf

    trees.visit_update(tree, visit)


def _check_output(out, tag, scalar_only):
    """The scalar to differentiate, or MLX's message for what was returned instead."""
    if isinstance(out, array):
        return out
    if scalar_only:
        raise ValueError(
            f"{tag} The return value of the function whose gradient we want to compute "
            f"should be a scalar array; but {type(out).__name__} was returned."
        )
    if not isinstance(out, tuple):
        raise ValueError(
            f"{tag} The return value of the function whose gradient we want to compute "
            "should be either a scalar array or a tuple with the first value being a "
            "scalar array (Union[array, tuple[array, Any, ...]]); but "
            f"{type(out).__name__} was returned."
        )
    if not out:
        raise ValueError(
            f"{tag} The return value of the function whose gradient we want to compute "
            "should be either a scalar array or a non-empty tuple. The first value should "
            "be a scalar array and the rest can be anything. Instead, we got an empty tuple."
        )
    if not isinstance(out[0], array):
        raise ValueError(
            f"{tag} The return value of the function whose gradient we want to compute "
            "should be either a scalar array or a tuple with the first value being a "
            "scalar array (Union[array, tuple[array, Any, ...]]); but it was a tuple with "
            f"the first value being of type {type(out[0]).__name__} ."
        )
    return out[0]
