"""Symbolic cases for CustomTransforms (custom_function, checkpoint) and Depends."""

from .. import core as mx
from ..core.primitives import custom as C
from . import Case


def _exp_with_rules():
    """A custom function whose rules are the true derivative, written by hand."""

    @mx.custom_function
    def f(x):
        return mx.exp(x) * 2.0

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return cotangent * output

    @f.jvp
    def f_jvp(primals, tangent):
        return tangent * mx.exp(primals) * 2.0

    @f.vmap
    def f_vmap(inputs, axes):
        return mx.exp(inputs) * 2.0, axes

    return f


def _defaults_only():
    """Only a vmap rule: vjp and jvp fall back to the function's own transforms."""

    @mx.custom_function
    def g(x, y):
        return mx.sin(x) * y, x + y

    @g.vmap
    def g_vmap(inputs, axes):
        x, y = inputs
        ax, ay = axes
        return g.fun(mx.moveaxis(x, ax, 0) if ax is not None else x,
                     mx.moveaxis(y, ay, 0) if ay is not None else y), (0, 0)

    return g


def _custom_sum(x, y):
    first, second = _defaults_only()(x, y)
    return first + second


CASES = [
    Case(C.CustomTransforms, lambda x: _exp_with_rules()(x), ((3,),)),
    Case(C.CustomTransforms, _custom_sum, ((2,), (2,))),
    Case(C.CustomTransforms, lambda x: mx.checkpoint(lambda a: mx.tanh(a) * a)(x), ((3,),)),
    Case(C.Depends, lambda x, y: C.depends([x * 2.0], [y])[0] + y * 0.0, ((2,), (2,))),
]
