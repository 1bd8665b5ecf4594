"""``mx.custom_function``: a function whose vjp, jvp or vmap you write yourself.

Read alongside: mlx/transforms.cpp ``custom_function`` and python/src/
transforms.cpp ``PyCustomFunction``. Calling a custom function with at least
one rule set runs the function as usual, puts each output behind
``stop_gradient`` (so no transform can see into it), and adds one
``CustomTransforms`` node over (array inputs, those outputs) that carries the
rules. A rule that is not set falls back to the automatic transform of the
function. Arrays captured in a closure are constants, as in MLX.

Rule signatures are MLX's:

- ``vjp(primals, cotangents, outputs, **kwargs)`` returns the primals' structure;
- ``jvp(primals, tangents)`` returns the outputs' structure; a tangent is
  None where an input has none;
- ``vmap(inputs, axes)`` returns ``(outputs, out_axes)``.

``primals`` (and ``inputs``) is the single positional argument itself when
there is one, else the tuple of them; ``cotangents`` and ``outputs`` have the
structure of what the function returned. A rule that returns the wrong
number, structure or shape of results raises a ValueError (MLX silently
returns a wrong gradient there).
"""

import functools

from ..array import _fmt_shape, array
from ..primitives.custom import CustomTransforms
from . import trees


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

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vjp_rule = self.jvp_rule = self.vmap_rule = None

    def vjp(self, rule):
        self.vjp_rule = rule
        return self

    def jvp(self, rule):
        self.jvp_rule = rule
        return self

    def vmap(self, rule):
        self.vmap_rule = rule
        return self

    def __call__(self, *args, **kwargs):
        if self.vjp_rule is None and self.jvp_rule is None and self.vmap_rule is None:
            return self.fun(*args, **kwargs)
        call = Custom(args, lambda a: self.fun(*a, **kwargs), strict_outputs=True)
        rules = _UserRules(self, call, kwargs)
        return call.apply(rules, "CustomTransforms")


class Custom:
    """One call of a function on a tree of inputs, seen as flat lists of arrays.

    ``tree`` holds the inputs (arrays and anything else); ``fun(tree)`` returns
    a tree whose array leaves are the outputs. Only arrays are transformed;
    other leaves pass through.
    """

    def __init__(self, tree, fun, strict_outputs):
        self.tree = tree
        self.fun = fun
        self.strict_outputs = strict_outputs
        self.inputs = [x for x in trees.flatten(tree, strict=False) if isinstance(x, array)]

    def rebuild(self, flat):
        """The input tree with its arrays replaced, in order, by ``flat``."""
        it = iter(flat)
        return trees.replace_arrays(self.tree, lambda _: next(it))

    def call_flat(self, *flat):
        """The function on flat arrays, its array outputs as a list."""
        out = self.fun(self.rebuild(flat))
        return [x for x in trees.flatten(out, strict=False) if isinstance(x, array)]

    def apply(self, rules, name):
        """Run the function and wrap its outputs in a CustomTransforms node."""
        from ..ops.elementwise import stop_gradient

        out_tree = self.fun(self.tree)
        leaves = trees.flatten(out_tree, strict=self.strict_outputs)
        outputs = [x for x in leaves if isinstance(x, array)]
        if not outputs:
            raise ValueError(
                f"[{name}] The function must return at least one array; it returned "
                f"{type(out_tree).__name__}: {out_tree!r}."
            )
        self.out_tree, self.outputs = out_tree, outputs
        hidden = [stop_gradient(o) for o in outputs]
        nodes = array._nodes(
            [o.shape for o in outputs], [o.dtype for o in outputs],
            CustomTransforms(len(self.inputs), rules, name), self.inputs + hidden,
        )
        it = iter(nodes)
        return trees.replace_arrays(out_tree, lambda _: next(it))

    def outputs_like(self, flat):
        """The output tree with its arrays replaced by ``flat``."""
        it = iter(flat)
        return trees.replace_arrays(self.out_tree, lambda _: next(it))


class DefaultRules:
    """The automatic transforms of the function: what a missing rule falls back to."""

    def __init__(self, call):
        self.call = call

    def vjp(self, primals, cotangents, outputs):
        from .vjp import vjp_impl

        return vjp_impl(self.call.call_flat, primals, cotangents)[1]

    def jvp(self, primals, tangents):
        from ..ops.creation import zeros_like
        from .jvp import jvp_impl

        tangents = [zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
        return jvp_impl(self.call.call_flat, primals, tangents)[1]

    def vmap(self, inputs, axes):
        from .vmap import vmap

        outputs = vmap(lambda *xs: self.call.call_flat(*xs), in_axes=tuple(axes))(*inputs)
        return outputs, [0] * len(outputs)


class _UserRules(DefaultRules):
    """A custom_function's rules, called with MLX's structures; unset ones default."""

    def __init__(self, cf, call, kwargs):
        super().__init__(call)
        self.cf, self.kwargs = cf, kwargs

    def _structure(self, flat):
        args = self.call.rebuild(flat)
        return args[0] if len(args) == 1 else args

    def vjp(self, primals, cotangents, outputs):
        if self.cf.vjp_rule is None:
            return super().vjp(primals, cotangents, outputs)
        result = self.cf.vjp_rule(
            self._structure(primals),
            self.call.outputs_like(cotangents),
            self.call.outputs_like(outputs),
            **self.kwargs,
        )
        args = self.call.tree
        expected = args[0] if len(args) == 1 else args
        return _match(result, expected, primals, "[custom vjp] The vjp function", "argument")

    def jvp(self, primals, tangents):
        if self.cf.jvp_rule is None:
            return super().jvp(primals, tangents)
        if self.kwargs:
            raise ValueError("[custom jvp] Function should only accept positional arguments")
        result = self.cf.jvp_rule(self._structure(primals), self._structure(tangents))
        return _match(
            result, self.call.out_tree, self.call.outputs, "[custom jvp] The jvp function", "output"
        )

    def vmap(self, inputs, axes):
        if self.cf.vmap_rule is None:
            return super().vmap(inputs, axes)
        result = self.cf.vmap_rule(self._structure(inputs), self._structure(axes))
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise ValueError("[custom vmap] Vmap function should return a tuple with 2 items.")
        outputs_tree, out_axes_tree = result
        outputs = trees.flatten(outputs_tree)
        if len(outputs) != len(self.call.outputs):
            raise ValueError(
                f"[custom vmap] The vmap function returned {len(outputs)} output(s); "
                f"the function has {len(self.call.outputs)}."
            )
        from .vmap import _axes_for

        return outputs, _axes_for(out_axes_tree, outputs_tree)


def _match(result, expected_tree, references, who, what):
    """Flatten a rule's result like ``expected_tree``; one array per reference array.

    None (or a missing cotangent for a non-array leaf) is allowed where the
    expected leaf is not an array; an array leaf must get an array of its shape.
    """
    from ..ops.creation import zeros_like

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
        if g is None:
            out.append(zeros_like(ref))
            continue
        if not isinstance(g, array):
            raise ValueError(f"{who} returned {type(g).__name__} where an array was expected.")
        if g.shape != ref.shape:
            raise ValueError(
                f"{who} returned shape {_fmt_shape(g.shape)} for an {what} of shape "
                f"{_fmt_shape(ref.shape)}."
            )
        out.append(g)
    return out
