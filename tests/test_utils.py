"""mlxref.utils: tree_flatten, tree_unflatten, tree_map, tree_map_with_path, tree_reduce.

The expected values are MLX's (python/mlx/utils.py, 0.32); the last part runs
the same calls through ``mlx.utils`` when it is installed and compares.
The edge cases where an earlier mlxref differed from mlx.utils have their own
tests, and a last test confirms the expected values are mlx.utils' own.
"""

from collections import OrderedDict, defaultdict, namedtuple

import pytest
from support import needs_mlx

import mlxref.core as mx
from mlxref.utils import tree_flatten, tree_map, tree_map_with_path, tree_reduce, tree_unflatten

Params = namedtuple("Params", ["w", "b"])


def nested():
    return {
        "layers": [
            {"w": 1, "b": 2},
            (3, Params(w=4, b=[5, 6])),
        ],
        "scale": 7.5,
        "name": "net",
        "empty": {},
        "nothing": [],
        "none": None,
    }


NESTED_FLAT = [
    ("layers.0.w", 1),
    ("layers.0.b", 2),
    ("layers.1.0", 3),
    ("layers.1.1.0", 4),
    ("layers.1.1.1.0", 5),
    ("layers.1.1.1.1", 6),
    ("scale", 7.5),
    ("name", "net"),
    ("none", None),
]


def _assert_same(a, b):
    """Equal, with the same container types all the way down."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    else:
        assert a == b or (a is None and b is None)


# --- tree_flatten -------------------------------------------------------------------


def test_flatten_nested_dicts_lists_tuples_and_namedtuples():
    assert tree_flatten(nested()) == NESTED_FLAT


def test_flatten_keeps_the_leaves_themselves():
    w = mx.array([1.0, 2.0])
    ((path, leaf),) = tree_flatten({"w": w})
    assert path == "w" and leaf is w


def test_flatten_docstring_examples():
    assert tree_flatten([[[0]]]) == [("0.0.0", 0)]
    assert tree_flatten([[[0]]], prefix=".hello") == [("hello.0.0.0", 0)]
    assert tree_flatten({"a": {"b": 1}}, destination={}) == {"a.b": 1}


def test_flatten_a_bare_leaf_has_the_empty_path():
    assert tree_flatten(5) == [("", 5)]
    assert tree_flatten(None) == [("", None)]
    assert tree_flatten(mx.array(1.0))[0][0] == ""


def test_flatten_empty_containers_have_no_leaves():
    assert tree_flatten({}) == []
    assert tree_flatten([]) == []
    assert tree_flatten({"a": [], "b": {}, "c": ()}) == []


def test_flatten_int_dict_keys_become_path_strings():
    assert tree_flatten({1: "x", 0: "y"}) == [("1", "x"), ("0", "y")]


def test_flatten_prefix():
    assert tree_flatten({"a": [1, 2]}, prefix=".model") == [("model.a.0", 1), ("model.a.1", 2)]
    assert tree_flatten(5, prefix=".x") == [("x", 5)]


def test_flatten_into_a_destination_dict():
    dest = {"old": 0}
    out = tree_flatten({"a": [1, {"b": 2}]}, destination=dest)
    assert out is dest
    assert dest == {"old": 0, "a.0": 1, "a.1.b": 2}


def test_flatten_into_a_destination_list_appends():
    dest = [("old", 0)]
    out = tree_flatten({"a": 1}, destination=dest)
    assert out is dest and dest == [("old", 0), ("a", 1)]


def test_flatten_is_leaf_stops_the_descent():
    tree = {"a": [1, 2], "b": {"c": [3]}, "d": (4, 5)}
    is_list = lambda x: isinstance(x, list)  # noqa: E731
    assert tree_flatten(tree, is_leaf=is_list) == [
        ("a", [1, 2]), ("b.c", [3]), ("d.0", 4), ("d.1", 5)
    ]
    # is_leaf is asked about the root too
    assert tree_flatten(tree, is_leaf=lambda x: isinstance(x, dict)) == [("", tree)]
    assert tree_flatten(tree, prefix=".p", is_leaf=lambda x: x is tree) == [("p", tree)]


def test_flatten_is_leaf_sees_every_node_once_in_order():
    seen = []

    def is_leaf(x):
        seen.append(x)
        return False

    tree = {"a": [1, 2], "b": 3}
    tree_flatten(tree, is_leaf=is_leaf)
    assert seen == [tree, [1, 2], 1, 2, 3]


# --- tree_unflatten -------------------------------------------------------------------


def test_unflatten_docstring_examples():
    assert tree_unflatten([("hello.world", 42)]) == {"hello": {"world": 42}}
    assert tree_unflatten({"hello.world": 42}) == {"hello": {"world": 42}}


def test_unflatten_int_keys_make_lists():
    out = tree_unflatten([("layers.0.w", 1), ("layers.1.w", 2), ("bias", 3)])
    _assert_same(out, {"layers": [{"w": 1}, {"w": 2}], "bias": 3})
    _assert_same(tree_unflatten([("0", "a"), ("1", "b")]), ["a", "b"])


def test_unflatten_orders_list_items_by_index_and_fills_gaps_with_empty_dicts():
    _assert_same(tree_unflatten([("x.1.y", 1), ("x.0.y", 2)]), {"x": [{"y": 2}, {"y": 1}]})
    _assert_same(tree_unflatten([("a.0", 1), ("a.2", 3)]), {"a": [1, {}, 3]})
    _assert_same(tree_unflatten([("10", 1), ("2", 0)]), [{}, {}, 0] + [{}] * 7 + [1])


def test_unflatten_mixed_keys_stay_a_dict():
    _assert_same(tree_unflatten([("a.0", 1), ("a.b", 2)]), {"a": {"0": 1, "b": 2}})


def test_unflatten_the_single_empty_key_is_the_bare_leaf():
    assert tree_unflatten([("", 5)]) == 5
    assert tree_unflatten({"": [1, 2]}) == [1, 2]  # the value itself, not a tree
    w = mx.array([1.0])
    assert tree_unflatten([("", w)]) is w


def test_unflatten_inverts_flatten_up_to_container_types():
    tree = nested()
    out = tree_unflatten(tree_flatten(tree))
    # tuples and NamedTuples come back as lists; empty containers are gone
    _assert_same(out, {
        "layers": [{"w": 1, "b": 2}, [3, [4, [5, 6]]]],
        "scale": 7.5,
        "name": "net",
        "none": None,
    })
    assert tree_flatten(out) == NESTED_FLAT
    # flatten into a dict and back
    assert tree_unflatten(tree_flatten(tree, destination={})) == out


def test_unflatten_of_arrays_keeps_them():
    w, b = mx.array([1.0]), mx.array(2.0)
    out = tree_unflatten([("layers.0.w", w), ("layers.0.b", b)])
    assert out["layers"][0]["w"] is w and out["layers"][0]["b"] is b


# --- tree_map -------------------------------------------------------------------------


def test_map_keeps_the_structure_and_container_types():
    out = tree_map(lambda x: x * 2 if isinstance(x, (int, float)) else x, nested())
    _assert_same(out, {
        "layers": [{"w": 2, "b": 4}, (6, Params(w=8, b=[10, 12]))],
        "scale": 15.0,
        "name": "net",
        "empty": {},
        "nothing": [],
        "none": None,
    })


def test_map_a_bare_leaf():
    assert tree_map(lambda x: x + 1, 1) == 2
    assert tree_map(lambda x: x is None, None) is True


def test_map_docstring_example():
    assert tree_map(lambda x: x * 2, {"a": [1, 2], "b": 3}) == {"a": [2, 4], "b": 6}


def test_map_with_rest_trees():
    out = tree_map(lambda a, b, c: a + b * c, {"a": [1, 2], "b": 3},
                   {"a": [10, 20], "b": 30}, {"a": [1, 2], "b": 3})
    assert out == {"a": [11, 42], "b": 93}


def test_map_rest_trees_may_extend_the_first():
    # where the first tree has a leaf, the others may hold a whole subtree
    out = tree_map(lambda a, b: (a, b), {"a": 1, "b": [2]}, {"a": {"deep": [1]}, "b": [3], "z": 9})
    assert out == {"a": (1, {"deep": [1]}), "b": [(2, 3)]}


def test_map_rest_trees_must_cover_the_first():
    with pytest.raises((KeyError, IndexError)):
        tree_map(lambda a, b: a, {"a": [1, 2]}, {"a": [1]})
    with pytest.raises(KeyError):
        tree_map(lambda a, b: a, {"a": 1}, {"b": 1})


def test_map_is_leaf():
    out = tree_map(len, {"a": [1, 2], "b": ([3], [4, 5, 6])}, is_leaf=lambda x: isinstance(x, list))
    _assert_same(out, {"a": 2, "b": (1, 3)})


def test_map_over_arrays():
    params = {"w": mx.array([1.0, 2.0]), "b": [mx.array(3.0)]}
    out = tree_map(lambda p: p * 2, params)
    assert out["w"].tolist() == [2.0, 4.0] and out["b"][0].item() == 6.0
    assert params["w"].tolist() == [1.0, 2.0]  # the input tree is not changed


def test_map_namedtuple_type_is_kept():
    out = tree_map(str, Params(w=1, b=(2, 3)))
    assert type(out) is Params and out == Params(w="1", b=("2", "3"))


# --- tree_map_with_path ---------------------------------------------------------------


def test_map_with_path_gives_dotted_paths():
    out = tree_map_with_path(lambda p, _: p, nested())
    _assert_same(out, {
        "layers": [{"w": "layers.0.w", "b": "layers.0.b"},
                   ("layers.1.0",
                    Params(w="layers.1.1.0", b=["layers.1.1.1.0", "layers.1.1.1.1"]))],
        "scale": "scale",
        "name": "name",
        "empty": {},
        "nothing": [],
        "none": "none",
    })


def test_map_with_path_agrees_with_flatten():
    paths = tree_flatten(tree_map_with_path(lambda p, _: p, nested()))
    assert [(k, k) for k, _ in NESTED_FLAT] == paths


def test_map_with_path_docstring_example():
    out = tree_map_with_path(lambda p, _: p, {"a": [1, 2], "b": {"c": 3}})
    assert out == {"a": ["a.0", "a.1"], "b": {"c": "b.c"}}


def test_map_with_path_root_leaf_has_path_none():
    assert tree_map_with_path(lambda p, x: (p, x), 5) == (None, 5)


def test_map_with_path_prefix():
    out = tree_map_with_path(lambda p, _: p, {"a": [1]}, path="model")
    assert out == {"a": ["model.a.0"]}
    assert tree_map_with_path(lambda p, x: p, 5, path="model") == "model"


def test_map_with_path_rest_and_is_leaf():
    out = tree_map_with_path(lambda p, a, b: f"{p}={a + b}", {"a": [1, 2]}, {"a": [10, 20]})
    assert out == {"a": ["a.0=11", "a.1=22"]}
    out = tree_map_with_path(lambda p, x: (p, len(x)), {"a": [1, 2], "b": {"c": [3]}},
                             is_leaf=lambda x: isinstance(x, list))
    assert out == {"a": ("a", 2), "b": {"c": ("b.c", 1)}}


# --- tree_reduce ----------------------------------------------------------------------


def test_reduce_sums_leaves_left_to_right():
    tree = {"a": [1, 2, 3], "b": [4, 5]}
    assert tree_reduce(lambda acc, x: acc + x, tree, 0) == 15
    order = tree_reduce(lambda acc, x: acc + [x], tree, [])
    assert order == [1, 2, 3, 4, 5]


def test_reduce_without_initializer_starts_from_the_first_leaf():
    calls = []

    def fn(acc, x):
        calls.append((acc, x))
        return acc * x

    assert tree_reduce(fn, {"a": [2, 3], "b": (4,)}) == 24
    assert calls == [(2, 3), (6, 4)]


def test_reduce_edge_cases():
    assert tree_reduce(lambda a, x: a + x, 5) == 5  # a leaf, no initializer
    assert tree_reduce(lambda a, x: a + x, 5, 1) == 6
    assert tree_reduce(lambda a, x: a + x, {}) is None  # nothing to reduce
    assert tree_reduce(lambda a, x: a + x, [], 7) == 7


def test_reduce_is_leaf():
    tree = {"a": [1, 2], "b": {"c": [3, 4, 5]}}
    total = tree_reduce(lambda acc, x: acc + len(x), tree, 0, is_leaf=lambda x: isinstance(x, list))
    assert total == 5


def test_reduce_over_arrays():
    params = {"w": mx.array([1.0, 2.0]), "b": mx.array([3.0])}
    n = tree_reduce(lambda acc, p: acc + p.size, params, 0)
    total = tree_reduce(lambda acc, p: acc + p.sum(), params, mx.array(0.0))
    assert n == 3 and total.item() == 6.0


# --- known differences from MLX -------------------------------------------------------


def test_flatten_prefix_first_character_is_always_dropped():
    assert tree_flatten([1], prefix="p") == [(".0", 1)]
    assert tree_flatten(5, prefix="x") == [("", 5)]


def test_map_with_path_empty_path_is_no_prefix():
    assert tree_map_with_path(lambda p, _: p, {"a": [1]}, path="") == {"a": ["a.0"]}


def test_map_of_dict_subclasses_gives_plain_dicts():
    out = tree_map(lambda x: x + 1, OrderedDict([("z", 1), ("a", 2)]))
    assert type(out) is dict and out == {"z": 2, "a": 3}
    out = tree_map(lambda x: x + 1, defaultdict(list, {"a": 1}))
    assert type(out) is dict and out == {"a": 2}


def test_unflatten_zero_padded_index_keeps_its_value():
    assert tree_unflatten([("a.01", 1)]) == {"a": [{}, 1]}


def test_unflatten_of_nothing_is_an_empty_list():
    assert tree_unflatten([]) == [] and tree_unflatten({}) == []


def test_flatten_rejects_a_bad_destination():
    with pytest.raises(ValueError, match="Destination should be either a list or a dictionary"):
        tree_flatten({"a": 1}, destination=())


# --- against real mlx.utils -----------------------------------------------------------


def _trees():
    return {
        "nested": nested(),
        "leaf": 5,
        "none": None,
        "list": [[[0]]],
        "tuple": (1, (2, 3), [4]),
        "namedtuple": Params(w=[1, 2], b={"c": 3}),
        "int_keys": {1: "x", 0: "y"},
        "empty_in_a_dict": {"a": [], "b": {}, "c": 1},
    }


def _calls():
    is_list = lambda x: isinstance(x, list)  # noqa: E731
    return {
        "flatten": lambda u, t: u.tree_flatten(t),
        "flatten_prefix": lambda u, t: u.tree_flatten(t, prefix=".model"),
        "flatten_is_leaf": lambda u, t: u.tree_flatten(t, is_leaf=is_list),
        "flatten_destination": lambda u, t: u.tree_flatten(t, destination={"x": 0}),
        # (an empty flattening is one of the known differences, tested above)
        "unflatten_flatten": lambda u, t: u.tree_unflatten(u.tree_flatten(t)),
        "unflatten_dict": lambda u, t: u.tree_unflatten(u.tree_flatten(t, destination={})),
        "map": lambda u, t: u.tree_map(lambda x: (x, "leaf"), t),
        "map_rest": lambda u, t: u.tree_map(lambda a, b: (a, b), t, t),
        "map_is_leaf": lambda u, t: u.tree_map(lambda x: repr(x), t, is_leaf=is_list),
        "map_with_path": lambda u, t: u.tree_map_with_path(lambda p, x: (p, x), t),
        "map_with_path_prefix": lambda u, t: u.tree_map_with_path(lambda p, x: p, t, path="root"),
        "map_with_path_is_leaf": lambda u, t: u.tree_map_with_path(
            lambda p, x: p, t, is_leaf=is_list
        ),
        "reduce": lambda u, t: u.tree_reduce(lambda a, x: f"{a}|{x}", t),
        "reduce_initializer": lambda u, t: u.tree_reduce(lambda a, x: a + [x], t, []),
        "reduce_is_leaf": lambda u, t: u.tree_reduce(lambda a, x: f"{a}|{x}", t, None, is_list),
    }


@needs_mlx
@pytest.mark.parametrize("call", list(_calls()))
@pytest.mark.parametrize("tree", list(_trees()))
def test_same_as_mlx_utils(tree, call):
    import mlx.utils as theirs

    import mlxref.utils as ours

    fn = _calls()[call]
    _assert_same(fn(ours, _trees()[tree]), fn(theirs, _trees()[tree]))


FLATS = {
    "docstring": [("hello.world", 42)],
    "lists": [("layers.0.w", 1), ("layers.1.w", 2), ("bias", 3)],
    "unordered": [("x.1.y", 1), ("x.0.y", 2)],
    "gap": [("a.0", 1), ("a.2", 3)],
    "wide": [("10", 1), ("2", 0)],
    "mixed": [("a.0", 1), ("a.b", 2)],
    "empty_key": [("", 5)],
    "empty_key_dict": {"": [1, 2]},
    "dict": {"a.b": 1, "a.c.0": 2, "a.c.1": 3},
}


@needs_mlx
@pytest.mark.parametrize("flat", list(FLATS))
def test_unflatten_same_as_mlx_utils(flat):
    import mlx.utils as theirs

    _assert_same(tree_unflatten(FLATS[flat]), theirs.tree_unflatten(FLATS[flat]))


@needs_mlx
def test_the_edge_cases_are_mlx_behaviour():
    """The expected values of the edge-case tests above are what mlx.utils does."""
    from mlx import utils as u

    assert u.tree_flatten([1], prefix="p") == [(".0", 1)]
    assert u.tree_flatten(5, prefix="x") == [("", 5)]
    assert u.tree_map_with_path(lambda p, _: p, {"a": [1]}, path="") == {"a": ["a.0"]}
    out = u.tree_map(lambda x: x + 1, OrderedDict([("z", 1), ("a", 2)]))
    assert type(out) is dict and out == {"z": 2, "a": 3}
    assert type(u.tree_map(lambda x: x + 1, defaultdict(list, {"a": 1}))) is dict
    assert u.tree_unflatten([("a.01", 1)]) == {"a": [{}, 1]}
    assert u.tree_unflatten([]) == [] and u.tree_unflatten({}) == []
    with pytest.raises(ValueError, match="Destination should be either a list or a dictionary"):
        u.tree_flatten({"a": 1}, destination=())


# --- tree_merge ---------------------------------------------------------------

from mlxref.utils import tree_merge  # noqa: E402

Pair = namedtuple("Pair", ["x", "y"])

MERGES = {
    "deep_dicts": ({"a": {"b": 1}, "c": [1, None]}, {"a": {"d": 2}, "c": [None, 2]}, None),
    "longer_list": ((1, 2), [None, None, 3], None),
    "namedtuple": (Pair(1, None), Pair(None, [2]), None),
    "empty_side": ({"a": {}, "b": 1}, {"a": {"z": 3}}, None),
    "both_empty": ({}, {}, None),
    "with_fn": ({"a": 1, "b": [2]}, {"a": 10, "b": [20]}, lambda p, q: p + q),
    "none_pair_with_fn": (None, None, lambda p, q: "both none"),
}
MERGE_ERRORS = {
    "clash": ({"a": 1}, {"a": 2}, "no merge function was provided"),
    "leaf_and_dict": ([1], {"a": 1}, "no merge function was provided"),
    "empty_types": ([], (), "Cannot merge list with tuple"),
    "empty_dict_list": ({"a": {}}, {"a": []}, "Cannot merge dict with list"),
    "missing_key_vs_empty": ({"b": {}}, {"c": 1}, "no merge function was provided"),
}
MERGE_EXPECTED = {
    "deep_dicts": {"a": {"b": 1, "d": 2}, "c": [1, 2]},
    "longer_list": (1, 2, 3),
    "namedtuple": Pair(1, [2]),
    "empty_side": {"a": {"z": 3}, "b": 1},
    "both_empty": {},
    "with_fn": {"a": 11, "b": [22]},
    "none_pair_with_fn": "both none",
}


@pytest.mark.parametrize("case", list(MERGES))
def test_tree_merge(case):
    a, b, fn = MERGES[case]
    out = tree_merge(a, b, fn)
    assert out == MERGE_EXPECTED[case] and type(out) is type(MERGE_EXPECTED[case])


@pytest.mark.parametrize("case", list(MERGE_ERRORS))
def test_tree_merge_errors(case):
    a, b, message = MERGE_ERRORS[case]
    with pytest.raises(ValueError, match=message):
        tree_merge(a, b)


def test_tree_merge_of_module_parameters():
    import mlxref.nn as nn

    layer = nn.Linear(2, 3)
    weights_only = {"weight": layer.parameters()["weight"]}
    merged = tree_merge(weights_only, {"bias": layer.parameters()["bias"]})
    assert sorted(merged) == ["bias", "weight"] and merged["bias"] is layer.parameters()["bias"]


@needs_mlx
@pytest.mark.parametrize("case", list(MERGES) + list(MERGE_ERRORS))
def test_tree_merge_same_as_mlx_utils(case):
    from mlx.utils import tree_merge as theirs

    if case in MERGES:
        a, b, fn = MERGES[case]
        assert theirs(a, b, fn) == MERGE_EXPECTED[case]
    else:
        a, b, message = MERGE_ERRORS[case]
        with pytest.raises(ValueError, match=message):
            theirs(a, b)


def test_unflatten_keeps_colliding_integer_keys_in_a_dict():
    """MLX (python/mlx/utils.py, after 0.32.4): "01" and "1" name two leaves,
    so they stay a dict; "01" alone is still index 1 of a list."""
    assert tree_unflatten([("01", "a"), ("1", "b"), ("2", "c")]) == {"01": "a", "1": "b", "2": "c"}
    assert tree_unflatten([("a.01", 1)]) == {"a": [{}, 1]}
    assert tree_unflatten([("0", "a"), ("1", "b")]) == ["a", "b"]
