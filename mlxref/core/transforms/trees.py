"""Trees of arrays: nested lists, tuples (NamedTuples kept) and dicts.

Read alongside: python/src/trees.cpp (``tree_flatten``, ``tree_unflatten``,
``tree_map``, ``validate_subtrees``). The transforms use these to accept any
nesting of arguments and outputs; ``mlxref.utils`` builds MLX's Python-level
helpers (paths, ``tree_reduce``) on ``map_tree``. vjp and jvp take and return
flat lists of arrays instead (``flat_arrays``, ``call_flat``: the checks of
python/src/transforms.cpp's bindings, whose primals and cotangents are lists
of arrays).
"""

from ..array import array


def is_namedtuple(t):
    return isinstance(t, tuple) and hasattr(type(t), "_fields")


def rebuild(node, children):
    """A container of the same type as ``node`` holding ``children``."""
    if isinstance(node, dict):
        return dict(zip(node.keys(), children))  # dict subclasses come back as dicts, as in MLX
    if is_namedtuple(node):
        return type(node)(*children)
    return type(node)(children)


def children(node):
    if isinstance(node, dict):
        return list(node.values())
    return list(node)


def is_container(node):
    return isinstance(node, (list, tuple, dict))


def map_tree(fn, tree, *rest, is_leaf=None):
    """``fn`` applied to the leaves of ``tree`` (and the matching nodes of ``rest``).

    ``rest`` trees must have ``tree``'s structure or extend it (``tree`` is a
    prefix of them), as in mlx.utils.tree_map.
    """
    if (is_leaf is not None and is_leaf(tree)) or not is_container(tree):
        return fn(tree, *rest)
    if isinstance(tree, dict):
        parts = [
            map_tree(fn, v, *(r[k] for r in rest), is_leaf=is_leaf) for k, v in tree.items()
        ]
    else:
        parts = [
            map_tree(fn, v, *(r[i] for r in rest), is_leaf=is_leaf) for i, v in enumerate(tree)
        ]
    return rebuild(tree, parts)


def flatten(tree, strict=True):
    """The leaves of ``tree`` in order. ``strict``: every leaf must be an array."""
    leaves = []
    stack = [tree]
    while stack:
        t = stack.pop()
        if is_container(t):
            stack.extend(reversed(children(t)))
        else:
            if strict and not isinstance(t, array):
                raise ValueError("[tree_flatten] The argument should contain only arrays")
            leaves.append(t)
    return leaves


def arrays(tree):
    """The array leaves of ``tree``, in order; other leaves are skipped."""
    return [leaf for leaf in flatten(tree, strict=False) if isinstance(leaf, array)]


def unflatten(tree, leaves):
    """``tree`` with its leaves replaced, in order, by ``leaves`` (an iterable)."""
    it = iter(leaves)
    return map_tree(lambda _: next(it), tree)


def replace_arrays(tree, values):
    """``tree`` with its array leaves replaced, in order, by ``values``; other leaves kept."""
    it = iter(values)
    return map_tree(lambda leaf: next(it) if isinstance(leaf, array) else leaf, tree)


def visit_update(tree, visitor):
    """MLX's ``tree_visit_update``: lists and dicts are updated in place, tuples
    (NamedTuples kept) are rebuilt; each array leaf becomes ``visitor(leaf)``."""
    if isinstance(tree, list):
        for i, x in enumerate(tree):
            tree[i] = visit_update(x, visitor)
        return tree
    if isinstance(tree, tuple):
        return rebuild(tree, [visit_update(x, visitor) for x in tree])
    if isinstance(tree, dict):
        for k in tree:
            tree[k] = visit_update(tree[k], visitor)
        return tree
    if isinstance(tree, array):
        return visitor(tree)
    return tree


def fill(tree, values):
    """MLX's ``tree_fill``: the array leaves of ``tree`` replaced, in order, by ``values``."""
    it = iter(values)
    visit_update(tree, lambda _: next(it))


def flat_arrays(tag, what, values):
    """``values`` as a list, if it is a flat list or tuple of arrays (MLX's binding check)."""
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, array) for v in values):
        raise TypeError(
            f"{tag}(): {what} must be a flat list of arrays, got {type(values).__name__}: "
            f"{values!r}."
        )
    return list(values)


def call_flat(tag, fun, args):
    """Call ``fun(*args)`` and return its outputs as a list of arrays."""
    out = fun(*args)
    if isinstance(out, array):
        return [out]
    if isinstance(out, (list, tuple)) and all(isinstance(o, array) for o in out):
        return list(out)
    # MLX raises "RuntimeError: std::bad_cast" here.
    raise TypeError(
        f"[{tag}] The function must return an array or a list or tuple of arrays; "
        f"but {type(out).__name__} was returned."
    )
