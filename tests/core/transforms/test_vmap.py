"""``mx.vmap(fun, in_axes=0, out_axes=0)`` (mlxref/core/transforms/vmap.py; MLX's
mlx/transforms.cpp): the API's semantics and messages, against MLX 0.32.4. The
vmap rules of the primitives are tested with their families, in tests/core/primitives/.

Every program is written once against a module ``m`` (``mlxref.core`` or
``mlx.core``) so the very same code runs on both libraries:

- the value table checks mlxref against values worked out by hand (so it runs
  without MLX) and against real MLX (structure of the result, shape, dtype,
  values);
- the error table checks the exception type and the exact message on both.

MLX's rules mirrored here (python/src/transforms.cpp ``py_vmap``):

- an axis is an int, ``None`` (not mapped) or a prefix tree of the arguments /
  outputs; negative axes count from the end;
- with ONE positional argument, ``in_axes`` is matched against that argument
  itself (``{'a': 0, 'b': None}`` works for one dict, ``({'a': 0, ...},)``
  does not; ``(0,)`` is accepted for one array);
- with several arguments ``in_axes`` must be a tuple (a list is not a prefix
  of the args tuple);
- output containers (dict, tuple, NamedTuple) are rebuilt with their type;
- an output that does not depend on a mapped input is broadcast along the
  batch axis.

The last tests check the errors for an axis out of range (an error both an
IndexError and a ValueError) or of the wrong type.
"""

import re
from collections import namedtuple

import pytest
from support import assert_array, assert_same_error, assert_same_tree, needs_mlx, real_mx

import mlxref.core as mx
from mlxref.core.transforms.vmap import VmapAxisError

NT = namedtuple("NT", "a b")


def X(m):
    return m.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])  # batch of 3 rows, or of 2 columns


def V(m):
    return m.array([10.0, 100.0])


# --- values: (program, expected result tree of nested lists) --------------------------

VALUE_CASES = {
    "axis_0": (
        lambda m: m.vmap(lambda a: a * 2)(X(m)),
        [[0, 2], [4, 6], [8, 10]],
    ),
    "axis_1": (
        lambda m: m.vmap(lambda a: a * a, in_axes=1)(X(m)),
        [[0, 4, 16], [1, 9, 25]],
    ),
    "negative_in_axis": (
        lambda m: m.vmap(lambda a: a * a, in_axes=-1)(X(m)),
        [[0, 4, 16], [1, 9, 25]],
    ),
    "negative_out_axis": (
        lambda m: m.vmap(lambda a: a + 1, out_axes=-1)(X(m)),
        [[1, 3, 5], [2, 4, 6]],
    ),
    "out_axis_1": (
        lambda m: m.vmap(lambda a: a + 1, out_axes=1)(X(m)),
        [[1, 3, 5], [2, 4, 6]],
    ),
    "in_1_out_1_round_trip": (
        lambda m: m.vmap(lambda a: a - 1, in_axes=1, out_axes=1)(X(m)),
        [[-1, 0], [1, 2], [3, 4]],
    ),
    "none_axis_is_not_mapped": (
        lambda m: m.vmap(lambda a, b: a * b, in_axes=(0, None))(X(m), V(m)),
        [[0, 100], [20, 300], [40, 500]],
    ),
    "different_axes_per_argument": (
        lambda m: m.vmap(lambda a, b: a + b, in_axes=(1, 0))(
            X(m), m.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]])
        ),
        [[10, 22, 34], [41, 53, 65]],
    ),
    # MLX's single-argument rule: in_axes is matched against the one argument itself.
    "single_dict_argument": (
        lambda m: m.vmap(lambda d: d["a"] * d["b"], in_axes={"a": 0, "b": None})(
            {"a": X(m), "b": V(m)}
        ),
        [[0, 100], [20, 300], [40, 500]],
    ),
    "single_array_one_tuple_axes": (
        lambda m: m.vmap(lambda a: a * 2, in_axes=(1,))(X(m)),
        [[0, 4, 8], [2, 6, 10]],
    ),
    "single_tuple_argument": (
        lambda m: m.vmap(lambda t: t[0] + t[1], in_axes=(0, None))((X(m), V(m))),
        [[10, 101], [12, 103], [14, 105]],
    ),
    "single_list_argument": (
        lambda m: m.vmap(lambda l: l[0] + l[1], in_axes=[0, None])([X(m), V(m)]),
        [[10, 101], [12, 103], [14, 105]],
    ),
    "single_namedtuple_argument": (
        lambda m: m.vmap(lambda t: t.a + t.b, in_axes=NT(0, None))(NT(X(m), V(m))),
        [[10, 101], [12, 103], [14, 105]],
    ),
    "namedtuple_argument_plain_tuple_axes": (
        lambda m: m.vmap(lambda t: t.a + t.b, in_axes=(0, None))(NT(X(m), V(m))),
        [[10, 101], [12, 103], [14, 105]],
    ),
    "several_arguments_tree_prefix": (
        lambda m: m.vmap(lambda d, y: d["a"] * y, in_axes=({"a": 1}, None))(
            {"a": X(m)}, m.array(3.0)
        ),
        [[0, 6, 12], [3, 9, 15]],
    ),
    "int_prefix_over_a_subtree": (
        lambda m: m.vmap(lambda d, y: d["a"] * y + d["b"], in_axes=(1, None))(
            {"a": X(m), "b": m.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])}, m.array(3.0)
        ),
        [[1, 9, 17], [5, 13, 21]],
    ),
    "dict_output": (
        lambda m: m.vmap(lambda a: {"s": a * 2, "d": a - 1})(X(m)),
        {"s": [[0, 2], [4, 6], [8, 10]], "d": [[-1, 0], [1, 2], [3, 4]]},
    ),
    "dict_out_axes_prefix": (
        lambda m: m.vmap(lambda a: {"s": a * 2, "d": a - 1}, out_axes={"s": 1, "d": 0})(X(m)),
        {"s": [[0, 4, 8], [2, 6, 10]], "d": [[-1, 0], [1, 2], [3, 4]]},
    ),
    "tuple_output_tuple_out_axes": (
        lambda m: m.vmap(lambda a: (a * 2, a - 1), out_axes=(0, 1))(X(m)),
        ([[0, 2], [4, 6], [8, 10]], [[-1, 1, 3], [0, 2, 4]]),
    ),
    "tuple_output_int_out_axes": (
        lambda m: m.vmap(lambda a: (a * 2, a - 1), out_axes=1)(X(m)),
        ([[0, 4, 8], [2, 6, 10]], [[-1, 1, 3], [0, 2, 4]]),
    ),
    "one_tuple_output": (
        lambda m: m.vmap(lambda a: (a * 2,), out_axes=1)(X(m)),
        ([[0, 4, 8], [2, 6, 10]],),
    ),
    "namedtuple_output_kept": (
        lambda m: m.vmap(lambda a: NT(a, a * 2), out_axes=NT(0, 1))(X(m)),
        NT([[0, 1], [2, 3], [4, 5]], [[0, 4, 8], [2, 6, 10]]),
    ),
    "list_output_kept": (
        lambda m: m.vmap(lambda a: [a, {"x": a * 3}])(X(m)),
        [[[0, 1], [2, 3], [4, 5]], {"x": [[0, 3], [6, 9], [12, 15]]}],
    ),
    # Outputs that never depend on a mapped input are broadcast along the batch axis.
    "unmapped_output_broadcast": (
        lambda m: m.vmap(lambda a, b: (a, b * 2), in_axes=(0, None))(X(m), V(m)),
        ([[0, 1], [2, 3], [4, 5]], [[20, 200], [20, 200], [20, 200]]),
    ),
    "unmapped_output_broadcast_on_out_axis": (
        lambda m: m.vmap(lambda a, b: (a, b * 2), in_axes=(0, None), out_axes=(0, 1))(X(m), V(m)),
        ([[0, 1], [2, 3], [4, 5]], [[20, 20, 20], [200, 200, 200]]),
    ),
    "unmapped_input_returned_as_is": (
        lambda m: m.vmap(lambda a, b: b, in_axes=(0, None))(X(m), V(m)),
        [[10, 100], [10, 100], [10, 100]],
    ),
    "constant_output": (
        lambda m: m.vmap(lambda a: m.array(5.0))(X(m)),
        [5, 5, 5],
    ),
    # Nested vmap: the outer maps b's rows, the inner a's elements.
    "nested_vmap": (
        lambda m: m.vmap(
            m.vmap(lambda a, b: a * b + a, in_axes=(0, None)), in_axes=(None, 0)
        )(m.array([1.0, 2.0, 3.0]), m.array([[1.0, 2.0], [3.0, 4.0]])),
        [[[2, 3], [4, 6], [6, 9]], [[4, 5], [8, 10], [12, 15]]],
    ),
    "nested_vmap_axes": (
        lambda m: m.vmap(m.vmap(lambda a: a * 10, in_axes=1, out_axes=0), in_axes=0, out_axes=1)(
            m.array([[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]])
        ),
        [[[0, 20], [40, 60]], [[10, 30], [50, 70]]],
    ),
    "bool_axis_is_an_int": (
        lambda m: m.vmap(lambda a: a * 1, in_axes=False)(X(m)),
        [[0, 1], [2, 3], [4, 5]],
    ),
}


def _check_tree(ours, expected):
    """``ours`` has the structure of ``expected`` (containers and their types) and its values."""
    if isinstance(expected, dict):
        assert type(ours) is dict and list(ours) == list(expected), ours
        for k in expected:
            _check_tree(ours[k], expected[k])
    elif isinstance(expected, tuple):
        assert type(ours) is type(expected) and len(ours) == len(expected), ours
        for o, e in zip(ours, expected):
            _check_tree(o, e)
    elif isinstance(expected, list) and not isinstance(ours, mx.array):
        assert type(ours) is list and len(ours) == len(expected), ours
        for o, e in zip(ours, expected):
            _check_tree(o, e)
    else:
        assert isinstance(ours, mx.array), ours
        assert_array(ours, expected, dtype=mx.float32)


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values(name):
    program, expected = VALUE_CASES[name]
    _check_tree(program(mx), expected)


@needs_mlx
@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_match_mlx(name):
    program, _ = VALUE_CASES[name]
    assert_same_tree(program(mx), program(real_mx))


def test_vmap_matches_a_python_loop():
    a = mx.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    b = mx.array([[2.0, 3.0], [-1.0, 0.5], [4.0, 1.0]])

    def f(x, y):
        return mx.tanh(x) * mx.exp(y[0]) + mx.sin(y[1])

    batched = mx.vmap(f, in_axes=(1, 0))(a, b)
    for i in range(3):
        assert_array(batched[i], f(a[:, i], b[i]).tolist())


def test_wrapped_function_keeps_its_name():
    def my_function(x):
        """Doc."""
        return x

    v = mx.vmap(my_function)
    assert v.__name__ == "my_function" and v.__doc__ == "Doc."


# --- errors: (program, exception type, exact MLX 0.32.4 message) ----------------------


def _ones(m, *shape):
    return m.ones(shape)


EVAL_MESSAGE = (
    "[eval] Attempting to eval an array during function transformations like compile or vmap "
    "is not allowed."
)
PREFIX_MESSAGE = "[tree_map] Additional input tree is not a valid prefix of the first tree."
FLATTEN_MESSAGE = "[tree_flatten] The argument should contain only arrays"


def _print_inside(a):
    print(a)
    return a


ERROR_CASES = {
    "inconsistent_sizes": (
        lambda m: m.vmap(lambda a, b: a + b)(_ones(m, 3, 2), _ones(m, 4, 2)),
        ValueError, "[vmap] Inconsistent axis sizes: 3 and 4.",
    ),
    # MLX compares each size with the LAST mapped input's and names the first that differs.
    "inconsistent_sizes_3_4_3": (
        lambda m: m.vmap(lambda a, b, c: a + b + c)(_ones(m, 3), _ones(m, 4), _ones(m, 3)),
        ValueError, "[vmap] Inconsistent axis sizes: 4 and 3.",
    ),
    "inconsistent_sizes_3_4_5": (
        lambda m: m.vmap(lambda a, b, c: a + b + c)(_ones(m, 3), _ones(m, 4), _ones(m, 5)),
        ValueError, "[vmap] Inconsistent axis sizes: 3 and 5.",
    ),
    "inconsistent_sizes_on_other_axes": (
        lambda m: m.vmap(lambda a, b: a + b.T, in_axes=(0, 1))(_ones(m, 3, 2), _ones(m, 2, 4)),
        ValueError, "[vmap] Inconsistent axis sizes: 3 and 4.",
    ),
    "vmap_of_a_scalar": (
        lambda m: m.vmap(lambda a: a)(m.array(1.0)),
        IndexError, "[vmap] Invalid vectorization axis 0 for array with shape ()",
    ),
    "in_axis_out_of_range": (
        lambda m: m.vmap(lambda a: a, in_axes=2)(_ones(m, 3, 2)),
        IndexError, "[vmap] Invalid vectorization axis 2 for array with shape (3,2)",
    ),
    "negative_in_axis_out_of_range_reported_normalised": (
        lambda m: m.vmap(lambda a: a, in_axes=-3)(_ones(m, 3, 2)),
        IndexError, "[vmap] Invalid vectorization axis -1 for array with shape (3,2)",
    ),
    "out_axis_out_of_range": (
        lambda m: m.vmap(lambda a: a, out_axes=3)(_ones(m, 3, 2)),
        IndexError, "[vmap] Invalid output vectorization axis 3 for array with shape (2)",
    ),
    "out_axis_out_of_range_by_one": (
        lambda m: m.vmap(lambda a: a, out_axes=2)(_ones(m, 3, 2)),
        IndexError, "[vmap] Invalid output vectorization axis 2 for array with shape (2)",
    ),
    "all_in_axes_none": (
        lambda m: m.vmap(lambda a: a, in_axes=(None,))(_ones(m, 3, 2)),
        ValueError, "At least one of in_axes must be non-None.",
    ),
    "no_arguments": (
        lambda m: m.vmap(lambda: m.array(1.0))(),
        ValueError, "At least one of in_axes must be non-None.",
    ),
    "float_axis": (
        lambda m: m.vmap(lambda a: a, in_axes=0.0)(_ones(m, 3, 2)),
        ValueError, "[vmap] axis must be int or None.",
    ),
    "string_axis": (
        lambda m: m.vmap(lambda a: a, in_axes="a")(_ones(m, 3, 2)),
        ValueError, "[vmap] axis must be int or None.",
    ),
    "string_out_axis": (
        lambda m: m.vmap(lambda a: a, out_axes="a")(_ones(m, 3, 2)),
        ValueError, "[vmap] axis must be int or None.",
    ),
    "two_tuple_axes_for_one_array": (
        lambda m: m.vmap(lambda a: a, in_axes=(0, 0))(_ones(m, 3)),
        ValueError, "[vmap] axis must be int or None.",
    ),
    # The single-argument rule: wrapping the one argument's axes in a tuple fails.
    "single_dict_argument_axes_wrapped_in_tuple": (
        lambda m: m.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))(
            {"a": _ones(m, 3, 2), "b": _ones(m, 2)}
        ),
        ValueError, PREFIX_MESSAGE,
    ),
    "single_tuple_argument_axes_wrapped_in_tuple": (
        lambda m: m.vmap(lambda t: t[0] + t[1], in_axes=((0, None),))(
            (_ones(m, 3, 2), _ones(m, 2))
        ),
        ValueError, PREFIX_MESSAGE,
    ),
    "single_list_argument_tuple_axes": (
        lambda m: m.vmap(lambda l: l[0] + l[1], in_axes=(0, None))([_ones(m, 3, 2), _ones(m, 2)]),
        ValueError, PREFIX_MESSAGE,
    ),
    # Several arguments need a tuple: a list is not a prefix of the args tuple.
    "several_arguments_list_axes": (
        lambda m: m.vmap(lambda a, b: a + b, in_axes=[0, None])(_ones(m, 3, 2), _ones(m, 2)),
        ValueError, PREFIX_MESSAGE,
    ),
    "in_axes_too_long": (
        lambda m: m.vmap(lambda a, b: a + b, in_axes=(0, None, 0))(_ones(m, 3, 2), _ones(m, 2)),
        ValueError, PREFIX_MESSAGE,
    ),
    "in_axes_too_short": (
        lambda m: m.vmap(lambda a, b: a + b, in_axes=(0,))(_ones(m, 3, 2), _ones(m, 2)),
        ValueError, PREFIX_MESSAGE,
    ),
    "dict_axes_with_extra_key": (
        lambda m: m.vmap(lambda d: d["a"], in_axes={"a": 0, "b": 0, "c": 0})(
            {"a": _ones(m, 3), "b": _ones(m, 3)}
        ),
        ValueError, PREFIX_MESSAGE,
    ),
    "dict_axes_with_missing_key": (
        lambda m: m.vmap(lambda d: d["a"], in_axes={"a": 0})({"a": _ones(m, 3), "b": _ones(m, 3)}),
        ValueError, PREFIX_MESSAGE,
    ),
    "dict_out_axes_with_missing_key": (
        lambda m: m.vmap(lambda a: {"x": a, "y": a * 2}, out_axes={"x": 1})(_ones(m, 3, 2)),
        ValueError, PREFIX_MESSAGE,
    ),
    "tuple_output_list_out_axes": (
        lambda m: m.vmap(lambda a: (a, a), out_axes=[0, 1])(_ones(m, 3, 2)),
        ValueError, PREFIX_MESSAGE,
    ),
    "list_output_tuple_out_axes": (
        lambda m: m.vmap(lambda a: [a, a], out_axes=(0, 1))(_ones(m, 3, 2)),
        ValueError, PREFIX_MESSAGE,
    ),
    "non_array_input": (
        lambda m: m.vmap(lambda a, b: a * b)(_ones(m, 3), 2.0),
        ValueError, FLATTEN_MESSAGE,
    ),
    "non_array_input_even_if_unmapped": (
        lambda m: m.vmap(lambda a, b: a * b, in_axes=(0, None))(_ones(m, 3), 2.0),
        ValueError, FLATTEN_MESSAGE,
    ),
    "non_array_output": (
        lambda m: m.vmap(lambda a: 2.0)(_ones(m, 3)),
        ValueError, FLATTEN_MESSAGE,
    ),
    "non_array_leaf_in_output": (
        lambda m: m.vmap(lambda a: (a, 2))(_ones(m, 3)),
        ValueError, FLATTEN_MESSAGE,
    ),
    "none_output": (
        lambda m: m.vmap(lambda a: None)(_ones(m, 3)),
        ValueError, FLATTEN_MESSAGE,
    ),
    "keyword_arguments": (
        lambda m: m.vmap(lambda a, b=None: a)(_ones(m, 3), b=_ones(m, 3)),
        TypeError, "[vmap] Keyword arguments are not supported.",
    ),
    "eval_inside": (
        lambda m: m.vmap(lambda a: (m.eval(a), a)[1])(_ones(m, 3)),
        ValueError, EVAL_MESSAGE,
    ),
    "eval_of_an_intermediate_inside": (
        lambda m: m.vmap(lambda a: (m.eval(a * 2), a)[1])(_ones(m, 3)),
        ValueError, EVAL_MESSAGE,
    ),
    "item_inside": (
        lambda m: m.vmap(lambda a: (a.item(), a)[1])(_ones(m, 3)),
        ValueError, EVAL_MESSAGE,
    ),
    "tolist_inside": (
        lambda m: m.vmap(lambda a: (a.tolist(), a)[1])(_ones(m, 3)),
        ValueError, EVAL_MESSAGE,
    ),
    "print_inside": (
        lambda m: m.vmap(_print_inside)(_ones(m, 3)),
        ValueError, EVAL_MESSAGE,
    ),
    "repr_inside": (
        lambda m: m.vmap(lambda a: (repr(a), a)[1])(_ones(m, 3)),
        ValueError, EVAL_MESSAGE,
    ),
    "async_eval_inside": (
        lambda m: m.vmap(lambda a: (m.async_eval(a), a)[1])(_ones(m, 3)),
        ValueError, "[async_eval] Not allowed inside a graph transformation.",
    ),
}


def _raises(program, m, exc, message):
    with pytest.raises(exc) as info:
        program(m)
    # An axis out of range: IndexError in MLX 0.32, ValueError in later MLX;
    # mlxref's VmapAxisError is both.
    allowed = (exc, VmapAxisError) if exc is IndexError else (exc,)
    assert type(info.value) in allowed, f"{type(info.value).__name__}: {info.value}"
    assert str(info.value) == message


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors(name):
    program, exc, message = ERROR_CASES[name]
    _raises(program, mx, exc, message)


@needs_mlx
@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_are_mlx_errors(name):
    program, exc, message = ERROR_CASES[name]
    _raises(program, real_mx, exc, message)


def _negative_out_axis(m):
    return m.vmap(lambda a: a, out_axes=-3)(_ones(m, 3, 2))


@needs_mlx
def test_negative_out_axis_out_of_range_mlx_reports_it_normalised():
    # MLX adds ndim + 1 (here 2) to a negative out axis before checking it.
    _raises(_negative_out_axis, real_mx, IndexError,
            "[vmap] Invalid output vectorization axis -1 for array with shape (2)")


def test_negative_out_axis_out_of_range_reported_normalised():
    _raises(_negative_out_axis, mx, IndexError,
            "[vmap] Invalid output vectorization axis -1 for array with shape (2)")


def test_none_in_axes_or_out_axes_is_a_type_error():
    # MLX: nanobind rejects a bare None (its message lists the signature).
    for kwargs in ({"in_axes": None}, {"out_axes": None}):
        with pytest.raises(TypeError):
            mx.vmap(lambda a: a, **kwargs)
        if real_mx is not None:
            with pytest.raises(TypeError):
                real_mx.vmap(lambda a: a, **kwargs)


@pytest.mark.parametrize(
    "program",
    [
        lambda m: m.vmap(lambda a: (a, a.sum()), out_axes=(0, None))(_ones(m, 3, 2)),
        lambda m: m.vmap(lambda a: a.sum(), out_axes=(None,))(_ones(m, 3, 2)),
    ],
)
def test_none_out_axis_is_a_value_error(program):
    # Every output gets a batch axis. MLX turns None into -1 and fails the bounds
    # check ("[vmap] Axis -1 invalid for output with 2 dimensions."); mlxref says why.
    with pytest.raises(ValueError, match=re.escape("[vmap] out_axes must be ints")):
        program(mx)
    if real_mx is not None:
        with pytest.raises(ValueError, match=re.escape("[vmap] Axis -1 invalid for output")):
            program(real_mx)


def test_transform_state_is_clean_after_an_error_inside_vmap():
    with pytest.raises(ValueError, match=re.escape(EVAL_MESSAGE)):
        mx.vmap(lambda a: (a.item(), a)[1])(_ones(mx, 3))
    y = mx.ones((2,)) * 3
    mx.eval(y)  # allowed again outside vmap
    assert y.tolist() == [3, 3]
    assert_array(mx.vmap(lambda a: a * 2)(y), [6, 6])


def test_eval_inside_grad_inside_vmap_is_still_refused():
    def f_of(m):
        def f(x):
            y = x * x
            m.eval(y)
            return y.sum()

        return f

    for m in (mx, real_mx) if real_mx is not None else (mx,):
        with pytest.raises(ValueError, match=re.escape(EVAL_MESSAGE)):
            m.vmap(m.grad(f_of(m)))(_ones(m, 3, 2))


# --- vmap's axis errors --------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda m: m.vmap(m.exp)(m.array(1.0)),
    lambda m: m.vmap(m.exp, in_axes=2)(m.array([0.0, 1.0])),
    lambda m: m.vmap(m.exp, in_axes=-3)(m.array([0.0, 1.0])),
    lambda m: m.vmap(m.exp, out_axes=2)(m.array([0.0, 1.0])),
])
@needs_mlx
def test_vmap_axis_out_of_range_is_index_and_value_error(call):
    with pytest.raises(IndexError) as theirs:
        call(real_mx)  # MLX 0.32: IndexError; later MLX: ValueError, same message
    with pytest.raises(VmapAxisError) as ours:
        call(mx)
    assert isinstance(ours.value, ValueError) and isinstance(ours.value, IndexError)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [
    lambda m: m.vmap(m.exp)("hello"),
    lambda m: m.vmap(m.exp, in_axes="hello")(m.array([0.0, 1.0])),
    lambda m: m.vmap(m.exp, out_axes="hello")(m.array([0.0, 1.0])),
    lambda m: m.vmap(m.exp, in_axes=(None,))(m.array([0.0, 1.0])),
    lambda m: m.vmap(m.add, in_axes=(0, (0,)))(m.array([0.0, 1.0]), m.array([0.0, 1.0])),
    lambda m: m.vmap(lambda x: x, in_axes={"b": 0})({"a": m.array([0.0, 1.0])}),
    lambda m: m.vmap(lambda x: x, in_axes={"a": 0, "b": 0})({"a": m.array([0.0, 1.0])}),
    lambda m: m.vmap(lambda x: x, in_axes=None),
    lambda m: m.vmap(lambda x: x, out_axes=None),
])
@needs_mlx
def test_vmap_axis_errors_match_mlx(call):
    ours = assert_same_error(call)
    assert ours[0] in (ValueError, TypeError)
