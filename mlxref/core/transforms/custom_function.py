"""``mx.custom_function``: a function whose vjp, jvp or vmap you write yourself.

Read alongside: mlx/transforms.cpp ``custom_function`` (``custom_transforms``
here: the function on flat lists of arrays, with the three default rules)
and python/src/transforms.cpp ``PyCustomFunction`` (the class
``custom_function``: trees of arguments in, MLX's rule signatures out).

Calling a custom function with at least one rule set runs the function as
usual, puts each output behind ``stop_gradient`` (so no transform can see
into it), and adds one ``CustomTransforms`` node over (array inputs, those
outputs) that carries the rules. A rule that is not set falls back to the
automatic transform of the function. Arrays captured in a closure are
constants, as in MLX. Rule signatures are MLX's:

- ``vjp(primals, cotangents, outputs, **kwargs)`` returns the primals' structure;
- ``jvp(primals, tangents)`` returns the outputs' structure; a tangent is
  None where an input has none;
- ``vmap(inputs, axes)`` returns ``(outputs, out_axes)``.

``primals`` (and ``inputs``) is the single positional argument itself when
there is one, else the tuple of them; ``cotangents`` and ``outputs`` have the
structure of what the function returned. A rule that returns the wrong
number, structure or shape of results, or None for an array, raises a
ValueError (MLX silently returns a wrong gradient there).
"""

import functools

from .. import ops
from ..array import array
from ..printing import format_shape
from ..ops.common import incompatible_arguments
from ..primitives.base import make_arrays
from ..primitives.custom import CustomTransforms
from . import trees
from .jvp import jvp
from .vjp import vjp
from .vmap import axes_for, vmap


def custom_transforms(fun, fun_vjp=None, fun_jvp=None, fun_vmap=None,
                      name="CustomTransforms", custom_rules=()):
    """MLX's C++ ``custom_function``: ``fun`` with its rules, on flat lists of arrays.

    ``fun(*arrays)`` returns a list of arrays, and so does the function
    returned. A rule not given is the function's own transform.
    """

    def default_vjp(primals, cotangents, outputs):
        return vjp(fun, primals, cotangents)[1]

    def default_jvp(primals, tangents, argnums):
        given = dict(zip(argnums, tangents))
        all_tangents = [given[i] if i in given else ops.zeros_like(p) for i, p in enumerate(primals)]
        return jvp(fun, primals, all_tangents)[1]

    def default_vmap(inputs, axes):
        outputs = vmap(fun, in_axes=tuple(axes))(*inputs)
        return outputs, [0] * len(outputs)

    def call(*inputs):
        outputs = [ops.stop_gradient(o) for o in fun(*inputs)]
        primitive = CustomTransforms(
            len(outputs), fun_vjp or default_vjp, fun_jvp or default_jvp,
            fun_vmap or default_vmap, name, custom_rules,
        )
        return make_arrays(primitive, [*inputs, *outputs])

    return call


def flatten_call(fun, args, kwargs, name, strict_outputs):
    """``fun(*args, **kwargs)`` seen as a function of the arrays in its arguments.

    Returns ``(inputs, flat_fun, last_output)``: the array leaves of
    ``(args, kwargs)``; ``flat_fun(*arrays)``, which calls ``fun`` with those
    leaves replaced and returns the array leaves of its result (``strict``: all
    leaves must be arrays); and ``last_output()``, the tree it last returned.
    """
    tree = (args, kwargs)
    last = []

    def flat_fun(*arrays):
        new_args, new_kwargs = trees.replace_arrays(tree, arrays)
        out = fun(*new_args, **new_kwargs)
        last[:] = [out]
        outputs = trees.arrays(trees.flatten(out, strict=strict_outputs))
        if not outputs:
            raise ValueError(
                f"[{name}] The function must return at least one array; it returned "
                f"{type(out).__name__}: {out!r}."
            )
        return outputs

    return trees.arrays(tree), flat_fun, lambda: last[0]


class custom_function:  # noqa: N801 (MLX's name)
    """Decorate a function; then set rules with ``@f.vjp``, ``@f.jvp``, ``@f.vmap``.

    >>> import mlxref.core as mx
    >>> @mx.custom_function
    ... def f(x):
    ...     return mx.sin(x)
    >>> @f.vjp
    ... def f_vjp(primals, cotangent, output):
    ...     return cotangent * 100.0
    >>> mx.grad(f)(mx.array(0.0))
    array(100, dtype=float32)
    """

    def __init__(self, f):
        if not callable(f):
            raise incompatible_arguments("__init__(self, f: Callable)", [self, f])
        functools.update_wrapper(self, f)
        self.fun = f
        self.vjp_rule = self.jvp_rule = self.vmap_rule = None

    def vjp(self, fun_vjp):
        self.vjp_rule = fun_vjp
        return self

    def jvp(self, fun_jvp):
        self.jvp_rule = fun_jvp
        return self

    def vmap(self, fun_vmap):
        self.vmap_rule = fun_vmap
        return self

    def __call__(self, *args, **kwargs):
        rules = {"vjp": self.vjp_rule, "jvp": self.jvp_rule, "vmap": self.vmap_rule}
        if not any(rules.values()):
            return self.fun(*args, **kwargs)
        inputs, flat_fun, last_output = flatten_call(
            self.fun, args, kwargs, "CustomTransforms", strict_outputs=True
        )

        def structure(arrays):
            """The arguments around ``arrays``: (the single positional argument or
            the tuple of them, the keyword arguments), as MLX hands them to a rule."""
            new_args, new_kwargs = trees.replace_arrays((args, kwargs), arrays)
            return (new_args[0] if len(new_args) == 1 else new_args), new_kwargs

        def outputs_like(arrays):
            return trees.replace_arrays(last_output(), arrays)

        def fun_vjp(primals, cotangents, outputs):
            p, k = structure(primals)
            result = self.vjp_rule(p, outputs_like(cotangents), outputs_like(outputs), **k)
            vjps = _match(result, p, primals, "[custom vjp] The vjp function", "argument")
            if len(vjps) < len(primals):
                # Arrays in keyword arguments: the rule returns nothing for them,
                # so theirs is the function's own vjp (MLX misaligns them).
                vjps += vjp(flat_fun, primals, cotangents)[1][len(vjps) :]
            return vjps

        def fun_jvp(primals, tangents, argnums):
            p, k = structure(primals)
            if k:
                raise ValueError("[custom jvp] Function should only accept positional arguments")
            given = dict(zip(argnums, tangents))
            t, _ = structure([given.get(i) for i in range(len(primals))])
            outputs = trees.arrays(last_output())
            return _match(self.jvp_rule(p, t), last_output(), outputs,
                          "[custom jvp] The jvp function", "output")

        def fun_vmap(inputs, axes):
            p, k = structure(inputs)
            if k:
                raise ValueError("[custom vmap] Function should only accept positional arguments")
            result = self.vmap_rule(p, structure(axes)[0])
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise ValueError("[custom vmap] Vmap function should return a tuple with 2 items.")
            outputs_tree, out_axes_tree = result
            outputs = trees.flatten(outputs_tree)
            expected = len(trees.arrays(last_output()))
            if len(outputs) != expected:
                raise ValueError(
                    f"[custom vmap] The vmap function returned {len(outputs)} output(s); "
                    f"the function has {expected}."
                )
            return outputs, axes_for(out_axes_tree, outputs_tree)

        outputs = custom_transforms(
            flat_fun,
            fun_vjp if self.vjp_rule else None,
            fun_jvp if self.jvp_rule else None,
            fun_vmap if self.vmap_rule else None,
            custom_rules=[r for r, rule in rules.items() if rule is not None],
        )(*inputs)
        return outputs_like(outputs)


def _match(result, expected_tree, references, who, what):
    """The arrays of a rule's ``result``, checked against ``expected_tree``.

    The result must have the expected tree's leaves: an array of the right
    shape for each array leaf (one per array in ``references``, in order);
    other leaves may be anything, None included.
    """
    got = trees.flatten(result, strict=False) if trees.is_container(expected_tree) else [result]
    want = trees.flatten(expected_tree, strict=False)
    if trees.is_container(expected_tree) and not trees.is_container(result):
        got = [result]
    if len(got) != len(want):
        raise ValueError(
            f"{who} returned {len(got)} value(s) but there are {len(want)} {what} leaves."
        )
    out = []
    refs = iter(references)
    for g, w in zip(got, want):
        if not isinstance(w, array):
            continue
        ref = next(refs)
        if not isinstance(g, array):
            raise ValueError(f"{who} returned {type(g).__name__} where an array was expected.")
        if g.shape != ref.shape:
            raise ValueError(
                f"{who} returned shape {format_shape(g.shape)} for an {what} of shape "
                f"{format_shape(ref.shape)}."
            )
        out.append(g)
    return out
