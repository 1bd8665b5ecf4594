"""Tree helpers, mirroring mlx.utils (python/mlx/utils.py).

A tree is any nesting of lists, tuples (NamedTuples keep their type) and
dicts; everything else is a leaf. Paths name leaves with dots: ``"layers.0.w"``.
"""

from itertools import zip_longest

from .core.transforms.trees import is_container, map_tree, rebuild

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_map_with_path", "tree_reduce",
           "tree_merge"]


def tree_map(fn, tree, *rest, is_leaf=None):
    """Apply ``fn`` to the leaves of ``tree``; ``rest`` trees supply extra arguments.

    >>> tree_map(lambda x: x * 2, {"a": [1, 2], "b": 3})
    {'a': [2, 4], 'b': 6}
    """
    return map_tree(fn, tree, *rest, is_leaf=is_leaf)


def _items(tree):
    return tree.items() if isinstance(tree, dict) else enumerate(tree)


def tree_map_with_path(fn, tree, *rest, is_leaf=None, path=None):
    """Like ``tree_map``, but ``fn(path, leaf, *rest_leaves)`` gets the leaf's dotted path.

    >>> tree_map_with_path(lambda p, _: p, {"a": [1, 2], "b": {"c": 3}})
    {'a': ['a.0', 'a.1'], 'b': {'c': 'b.c'}}
    """
    if (is_leaf is not None and is_leaf(tree)) or not is_container(tree):
        return fn(path, tree, *rest)
    parts = [
        tree_map_with_path(
            fn,
            v,
            *(r[k] for r in rest),
            is_leaf=is_leaf,
            path=f"{path}.{k}" if path else str(k),
        )
        for k, v in _items(tree)
    ]
    return rebuild(tree, parts)


def tree_flatten(tree, prefix="", is_leaf=None, destination=None):
    """The leaves of ``tree`` as ``[(path, leaf), ...]`` (or into the dict ``destination``).

    >>> tree_flatten({"a": [1, 2], "b": {"c": 3}})
    [('a.0', 1), ('a.1', 2), ('b.c', 3)]
    """
    if destination is not None and not isinstance(destination, (list, dict)):
        raise ValueError("Destination should be either a list or a dictionary or None")
    out = [] if destination is None else destination
    stack = [(prefix, tree)]
    while stack:
        path, t = stack.pop()
        if (is_leaf is not None and is_leaf(t)) or not is_container(t):
            # MLX always drops the first character (the leading ".").
            if isinstance(out, dict):
                out[path[1:]] = t
            else:
                out.append((path[1:], t))
            continue
        stack.extend(reversed([(f"{path}.{k}", v) for k, v in _items(t)]))
    return out


def tree_unflatten(tree):
    """Rebuild a tree from ``tree_flatten``'s output (a list of pairs or a dict).

    Integer keys become lists; a single empty key gives back the bare leaf.

    >>> tree_unflatten([("a.0", 1), ("a.1", 2), ("b.c", 3)])
    {'a': [1, 2], 'b': {'c': 3}}
    """
    items = list(tree.items()) if isinstance(tree, dict) else list(tree)
    if not items:
        return []
    if len(items) == 1 and items[0][0] == "":
        return items[0][1]
    root = {}
    for path, value in items:
        node = root
        keys = path.split(".")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    return _lists_from_int_keys(root)


def _lists_from_int_keys(node):
    if not isinstance(node, dict):
        return node
    node = {k: _lists_from_int_keys(v) for k, v in node.items()}
    if node and all(k.isdigit() for k in node):
        by_index = {int(k): v for k, v in node.items()}
        if len(by_index) == len(node):  # "01" next to "1": a dict, as in MLX
            return [by_index.get(i, {}) for i in range(max(by_index) + 1)]
    return node


def tree_reduce(fn, tree, initializer=None, is_leaf=None):
    """Fold ``fn(accumulator, leaf)`` over the leaves, left to right.

    >>> tree_reduce(lambda acc, x: acc + x, {"a": [1, 2], "b": 3}, 0)
    6
    """
    acc = initializer
    for _, leaf in tree_flatten(tree, is_leaf=is_leaf):
        acc = leaf if acc is None else fn(acc, leaf)
    return acc


def _empty_container(tree):
    return isinstance(tree, (dict, list, tuple)) and len(tree) == 0


def tree_merge(tree_a, tree_b, merge_fn=None):
    """Merge two trees into one holding the leaves of both: a deep ``dict.update``.

    An empty container or ``None`` on one side gives the other side; lists and
    tuples merge position by position (the result has ``tree_a``'s type), dicts
    key by key. Where both trees have something, leaves or both nothing,
    ``merge_fn(a, b)`` decides (without one, a ValueError), as MLX's ``tree_merge``.

    >>> tree_merge({"a": [1, None], "b": {"x": 1}}, {"a": [None, 2], "c": 3})
    {'a': [1, 2], 'b': {'x': 1}, 'c': 3}
    """
    if _empty_container(tree_a) and _empty_container(tree_b):
        if type(tree_a) is not type(tree_b):
            raise ValueError(f"Cannot merge {type(tree_a).__name__} with {type(tree_b).__name__}")
        return type(tree_a)()
    a = None if _empty_container(tree_a) else tree_a
    b = None if _empty_container(tree_b) else tree_b
    if (a is None) != (b is None):
        return a if b is None else b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        merged = [tree_merge(x, y, merge_fn) for x, y in zip_longest(a, b)]
        return type(a)(*merged) if hasattr(a, "_fields") else type(a)(merged)
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: tree_merge(a.get(k), b.get(k), merge_fn) for k in {**a, **b}}
    if merge_fn is None:
        raise ValueError(
            "Trees contain elements at the same locations but no merge function was provided")
    return merge_fn(a, b)
