"""Einstein summation: ``einsum`` and ``einsum_path``, composed from existing ops.

Read alongside: mlx/einsum.cpp (``parse``, ``greedy_path``,
``einsum_path_helper``, ``preprocess_einsum_inputs``, ``collapse_repeats``,
``batch_tensordot``, ``einsum_naive``, ``einsum``) and the two bindings in
python/src/ops.cpp. MLX follows NumPy's ``einsum_path`` (itself from
opt_einsum), and so does mlxref, step for step:

1. **Parse** ``"ij,jk->ik"`` into input subscripts and an output. Without
   ``->`` the output is every letter used once, sorted (upper case before
   lower case), after ``...`` if there is one.
2. **Expand** each ``...`` into as many unused letters as its operand needs,
   taken from the end of ``a..zA..Z`` minus the letters in use (so operands
   with fewer axes line up on the right, as in broadcasting).
3. **Choose a path.** With one or two operands the whole sum is one step.
   With more, a greedy search: among the pairs that share a letter (all
   pairs if none do), contract the pair that removes the most elements,
   then the cheaper one, then the first; repeat until one term is left.
   Its FLOP counts and scalings are what ``einsum_path`` reports.
4. **Evaluate each step** with ordinary ops: a repeated letter (``"ii"``)
   becomes a gather of the diagonal; a letter in no other term and not in
   the output is summed away at once; two terms with a letter to contract
   become a transpose, a reshape and a batched ``matmul`` (a "batched
   tensordot"); anything else is a broadcasting ``multiply`` and a ``sum``.

So ``einsum`` has no primitive of its own: its gradients, jvps and batching
are those of ``Gather``, ``Reduce``, ``Matmul``, ``Multiply`` and the shape
ops it is made of.

C++'s unordered sets and maps decide, in MLX, the order of the letters in
an intermediate term with equal sizes and of several repeated letters in
one operand; mlxref takes them in order of first appearance. That changes
only which transposes the graph holds, never the path, the values or the
report.
"""

from ..array import array
from ..printing import format_shape
from .common import broadcast_to, incompatible_arguments
from .creation import arange
from .docs import shared_doc
from .elementwise import multiply
from .indexing import gather
from .linalg import matmul
from .reduction import sum as _sum
from .shape import reshape, squeeze, transpose

__all__ = ["einsum", "einsum_path"]

_EINSUM = "einsum(subscripts: str, *operands, stream: StreamOrDevice = None) -> array"
_EINSUM_PATH = "einsum_path(subscripts: str, *operands)"
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class _Term:
    """MLX's ``Subscript``: a term's letters in axis order (``str``) and as a
    set (``chars``: a dict, so that iterating it follows first appearance)."""

    __slots__ = ("str", "chars")

    def __init__(self, letters, chars=None):
        self.str = letters
        self.chars = dict.fromkeys(letters if chars is None else chars)

    def copy(self):
        return _Term(self.str, self.chars)


def _parse(subscripts):
    """MLX's ``parse``: the input subscripts and the output, with spaces removed
    and the output inferred in implicit mode."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, rhs = subscripts.split("->", 1)
    else:
        lhs, rhs, counts = subscripts, "", {}
        for c in subscripts:
            if c == ",":
                continue
            if c == "." and not rhs:
                rhs = "..."
                continue
            counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(rhs + "".join(c for c, n in counts.items() if n == 1)))
    return lhs.split(","), rhs


def _term_size(letters, dim_map):
    """The number of elements of a term; a letter no operand has counts 0 (MLX
    reads a missing entry of its map as 0)."""
    size = 1
    for c in letters:
        size *= dim_map.get(c, 0)
    return size


def _flop_count(letters, inner, num_terms, dim_map):
    """opt_einsum's FLOP estimate: the size of the joint index space times the
    number of products (at least one), plus one for the additions if anything
    is summed."""
    return _term_size(letters, dim_map) * (max(1, num_terms - 1) + (1 if inner else 0))


def _cost_and_scaling(inputs, output, dim_map):
    """MLX's ``compute_cost_and_scaling``: the cost of doing a step in one go,
    and the number of distinct letters (its scaling)."""
    letters = {}
    for t in inputs:
        letters.update(t.chars)
    inner = any(c not in output.chars for c in letters)
    return _flop_count(letters, inner, len(inputs), dim_map), len(letters)


def _greedy_path(inputs, output, dim_map, cost_limit, memory_limit):
    """MLX's ``greedy_path``: a list of steps ``(terms, output term, positions)``
    with the path's cost and scaling. Each candidate pair is scored once, when
    it first appears, and kept (with its old positions shifted) while neither
    of its terms has been used, as in MLX."""
    inputs = list(inputs)
    pairs = [(i, j) for i in range(len(inputs)) for j in range(i + 1, len(inputs))]
    path, candidates = [], []
    path_cost = path_scaling = 0

    def add_candidate(p1, p2):
        joint = dict(inputs[p1].chars)
        joint.update(inputs[p2].chars)
        kept = {}
        for i, t in enumerate(inputs):
            if i not in (p1, p2):
                kept.update((c, None) for c in t.chars if c in joint)
        kept.update((c, None) for c in output.chars if c in joint)
        new_size = _term_size(kept, dim_map)
        if new_size > memory_limit:
            return
        removed = (_term_size(inputs[p1].chars, dim_map)
                   + _term_size(inputs[p2].chars, dim_map) - new_size)
        cost = _flop_count(joint, len(joint) > len(kept), 2, dim_map)
        if path_cost + cost > cost_limit:
            return
        candidates.append([removed, cost, kept, len(joint), p1, p2])

    for _ in range(len(inputs) - 1):
        for p1, p2 in pairs:  # outer products only if nothing else is possible
            if any(c in inputs[p2].chars for c in inputs[p1].chars):
                add_candidate(p1, p2)
        if not candidates:
            for p1, p2 in pairs:
                add_candidate(p1, p2)
        if not candidates:  # the rest in one naive step
            cost, scale = _cost_and_scaling(inputs, output, dim_map)
            path.append((inputs, output, list(range(len(inputs)))))
            path_cost += cost
            path_scaling = max(scale, path_scaling)
            break
        best = candidates[0]
        for c in candidates[1:]:
            if c[0] > best[0] or (c[0] == best[0] and c[1] < best[1]):
                best = c
        _, best_cost, kept, dims, x, y = best
        path_scaling = max(dims, path_scaling)
        # MLX orders the new term's letters by increasing size.
        new_term = _Term("".join(sorted(kept, key=lambda c: dim_map[c])), kept)
        path.append(([inputs[x], inputs[y]], new_term, [x, y]))
        del inputs[y], inputs[x]
        inputs.append(new_term)
        survivors = []
        for c in candidates:
            if c[4] in (x, y) or c[5] in (x, y):
                continue
            c[4] -= (c[4] > x) + (c[4] > y)
            c[5] -= (c[5] > x) + (c[5] > y)
            survivors.append(c)
        pairs = [(i, len(inputs) - 1) for i in range(len(inputs) - 1)]
        path_cost += best_cost
        candidates = survivors
    return path, path_cost, path_scaling


def _path_helper(subscripts, operands, fn_name):
    """MLX's ``einsum_path_helper``: check the subscripts against the operands
    and find the path. Returns the steps and (naive cost, naive scaling,
    optimized cost, optimized scaling)."""
    if not operands:
        raise ValueError(f"[{fn_name}] At least one operand is required.")
    in_subscripts, out_subscript = _parse(subscripts)
    if len(operands) != len(in_subscripts):
        raise ValueError(
            f"[{fn_name}] Number of operands, {len(operands)}, does not match number of "
            f"input subscripts, {len(in_subscripts)}"
        )
    remaining = "".join(c for c in _LETTERS if c not in subscripts)
    max_ellipsis = 0

    def expand(sub, operand, idx):
        nonlocal max_ellipsis
        have_ellipsis, before, after, i = False, 0, 0, 0
        while i < len(sub):
            c = sub[i]
            if not ("a" <= c <= "z" or "A" <= c <= "Z"):
                if sub[i:i + 3] != "..." or i + 3 > len(sub):
                    if not c.isascii():  # MLX fails decoding its own message here
                        raise ValueError(
                            f"[{fn_name}] Subscripts must be ASCII letters, but got {c!r}.")
                    raise ValueError(f"[{fn_name}] Subscripts must be letters, but got '{c}'.")
                if have_ellipsis:
                    raise ValueError(
                        f"[{fn_name}] Only one ellipsis per subscript is allowed but found "
                        f"more in '{sub}'."
                    )
                have_ellipsis = True
                i += 3
                continue
            if have_ellipsis:
                after += 1
            else:
                before += 1
            i += 1
        if not have_ellipsis:
            return sub
        if operand is not None:
            length = operand.ndim - before - after
            if length < 0:
                raise ValueError(
                    f"[{fn_name}] Operand {idx} with shape {format_shape(operand.shape)} has "
                    f"insufficient dimensions for subscript '{sub}'. The ellipsis requires "
                    f"at least {before + after} dimensions but the operand has "
                    f"{operand.ndim} dimensions."
                )
            max_ellipsis = max(length, max_ellipsis)
        else:
            length = max_ellipsis
        if length > len(remaining):  # MLX reads past its list of letters here
            raise ValueError(
                f"[{fn_name}] The ellipsis in '{sub}' stands for {length} axes but only "
                f"{len(remaining)} letters are unused."
            )
        return sub[:before] + remaining[len(remaining) - length:] + sub[before + 3:]

    in_subscripts = [expand(s, op, i) for i, (s, op) in enumerate(zip(in_subscripts, operands))]
    out_subscript = expand(out_subscript, None, -1)
    if len(set(out_subscript)) != len(out_subscript):
        raise ValueError(f"[{fn_name}] Repeat indices not allowed in output.")
    output = _Term(out_subscript)

    dim_map, inputs = {}, []
    for i, (sub, op) in enumerate(zip(in_subscripts, operands)):
        inputs.append(_Term(sub))
        if len(sub) != op.ndim:
            raise ValueError(
                f"[{fn_name}] Invalid number of subscripts {len(sub)} for input {i} with "
                f"{op.ndim} dimensions."
            )
        if len(set(sub)) < len(sub):
            local = {}
            for c, dim in zip(sub, op.shape):
                if local.setdefault(c, dim) != dim:
                    raise ValueError(
                        f"[{fn_name}] Dimensions of repeated subscripts do not have the same "
                        f"size ({local[c]} != {dim})."
                    )
        for j, (c, dim) in enumerate(zip(sub, op.shape)):
            known = dim_map.setdefault(c, dim)
            if dim != 1 and known != 1 and known != dim:
                raise ValueError(
                    f"[{fn_name}] Cannot broadcast dimension {j} of input {i} with shape "
                    f"{format_shape(op.shape)} to size {known}."
                )
            dim_map[c] = max(known, dim)

    max_size = max([_term_size(out_subscript, dim_map)]
                   + [_term_size(s, dim_map) for s in in_subscripts])
    naive_cost, naive_scaling = _cost_and_scaling(inputs, output, dim_map)
    if len(inputs) <= 2:
        path = [(inputs, output, list(range(len(inputs))))]
        cost, scaling = naive_cost, naive_scaling
    else:
        path, cost, scaling = _greedy_path(inputs, output, dim_map, naive_cost, max_size)
        terms, _, positions = path[-1]
        path[-1] = (terms, output, positions)
    return path, (naive_cost, naive_scaling, cost, scaling)


def _check_call(subscripts, operands, signature, fn_name):
    """The bindings' checks: a str, then operands that are all arrays (MLX's
    cast of them to a vector of arrays fails with ``std::bad_cast`` for
    anything else, Python numbers and NumPy arrays included)."""
    if not isinstance(subscripts, str):
        raise incompatible_arguments(signature, (subscripts, *operands))
    if not all(isinstance(op, array) for op in operands):
        raise RuntimeError("std::bad_cast")


def einsum_path(subscripts, *operands):
    """``mx.einsum_path``: the order in which ``einsum`` would contract the ``operands``, and a short report of its cost, as a tuple ``(path, report)``.

    ``path`` is a list of tuples of operand positions, one tuple per step: the
    positions index the list of terms left at that step, and each step's
    result is appended at its end. With one or two operands it is one step;
    with more, a greedy search (NumPy's, as MLX's) contracts first the pair that
    removes the most elements. ``report`` is MLX's text: the equation, the naive
    and optimized scalings and FLOP counts. Nothing is computed on the operands'
    values.

    Arguments:
    - ``subscripts``: the equation, a string (as for ``einsum``).
    - ``operands``: the arrays (only their shapes are read).

    Errors: those of ``einsum``, named for einsum_path (MLX: "[einsum_path]
    Number of operands, 1, does not match number of input subscripts, 2").

    >>> path, report = mx.einsum_path("ij,jk,kl->il", mx.ones((2, 3)), mx.ones((3, 4)), mx.ones((4, 5)))
    >>> path
    [(1, 2), (0, 1)]
    >>> print(report)
      Complete contraction:  ij,jk,kl->il
             Naive scaling:  4
         Optimized scaling:  3
          Naive FLOP count:  360
      Optimized FLOP count:  180
    """
    _check_call(subscripts, operands, _EINSUM_PATH, "einsum_path")
    path, (naive_cost, naive_scaling, cost, scaling) = _path_helper(
        subscripts, operands, "einsum_path")
    report = (
        f"  Complete contraction:  {subscripts}\n"
        f"         Naive scaling:  {naive_scaling}\n"
        f"     Optimized scaling:  {scaling}\n"
        f"      Naive FLOP count:  {naive_cost}\n"
        f"  Optimized FLOP count:  {cost}\n"
    )
    return [tuple(positions) for _, _, positions in path], report


def _collapse_repeats(x, term):
    """MLX's ``collapse_repeats``: the diagonal over each repeated letter, by one
    gather with an ``arange`` index per occurrence; the repeated letters come
    first in the new term (``"iji"`` becomes ``"ij"``, ``"jii"`` becomes ``"ij"``)."""
    counts = {}
    for c in term.str:
        counts[c] = counts.get(c, 0) + 1
    repeats = [(c, n) for c, n in counts.items() if n > 1]
    slice_sizes = list(x.shape)
    axes, indices = [], []
    n_expand = len(repeats)
    for c, n in repeats:
        for i, ci in enumerate(term.str):
            if ci == c:
                slice_sizes[i] = 1
                axes.append(i)
        size = x.shape[axes[-1]]
        idx = reshape(arange(size), (size,) + (1,) * (n_expand - 1))
        n_expand -= 1
        indices += [idx] * n
    x = gather(x, indices, axes, slice_sizes)
    new = "".join(c for c, _ in repeats) + "".join(c for c in term.str if counts[c] == 1)
    term.str, term.chars = new, dict.fromkeys(new)
    return squeeze(x, [ax + indices[0].ndim for ax in axes])


def _preprocess(terms, output, positions, operands):
    """MLX's ``preprocess_einsum_inputs``: collapse repeated letters, then sum
    every letter found in one term only (not in another term, not in the
    output) before anything is multiplied."""
    for t, pos in zip(terms, positions):
        if len(t.chars) < len(t.str):
            operands[pos] = _collapse_repeats(operands[pos], t)
    counts = {}
    for t in terms:
        for c in t.chars:
            counts[c] = counts.get(c, 0) + 1
    for c in output.chars:
        counts[c] = counts.get(c, 0) + 1
    for t, pos in zip(terms, positions):
        sum_axes = [ax for ax, c in enumerate(t.str) if counts[c] == 1]
        if sum_axes:
            operands[pos] = _sum(operands[pos], sum_axes)
            t.str = "".join(c for c in t.str if counts[c] != 1)
            t.chars = dict.fromkeys(t.str)


def _batch_tensordot(a, b, a_contract, a_batch, a_concat, b_contract, b_batch, b_concat):
    """MLX's ``batch_tensordot``: broadcast the shared axes, lay ``a`` out as
    (batch..., concat, contract) and ``b`` as (batch..., contract, concat),
    one batched ``matmul``, and the free axes unfolded."""
    a_shape, b_shape = list(a.shape), list(b.shape)
    for i, j in list(zip(a_contract, b_contract)) + list(zip(a_batch, b_batch)):
        a_shape[i] = b_shape[j] = max(a.shape[i], b.shape[j])
    a, b = broadcast_to(a, a_shape), broadcast_to(b, b_shape)

    def transpose_reshape(x, first, middle, last):
        size1 = size2 = 1
        for ax in middle:
            size1 *= x.shape[ax]
        for ax in last:
            size2 *= x.shape[ax]
        shape = tuple(x.shape[ax] for ax in first) + (size1, size2)
        return reshape(transpose(x, first + middle + last), shape)

    out_shape = (tuple(a.shape[ax] for ax in a_batch + a_concat)
                 + tuple(b.shape[ax] for ax in b_concat))
    a = transpose_reshape(a, a_batch, a_concat, a_contract)
    b = transpose_reshape(b, b_batch, b_contract, b_concat)
    return reshape(matmul(a, b), out_shape)


def _dot_step(terms, output, positions, operands):
    """One step of two terms with a letter to contract: MLX sorts each letter
    of ``a`` into contracted, batch (in both and kept) or concat (kept, in
    ``a`` only), finds the same letters in ``b``, and transposes the
    tensordot's (batch, a's concat, b's concat) result into the step's order."""
    ta, tb = terms
    a_contract, a_batch, a_concat = [], [], []
    for i, c in enumerate(ta.str):
        if c not in output.chars:
            a_contract.append(i)
        elif c in tb.chars:
            a_batch.append(i)
        else:
            a_concat.append(i)
    b_contract = [tb.str.index(ta.str[i]) for i in a_contract]
    b_batch = [tb.str.index(ta.str[i]) for i in a_batch]
    b_concat = [i for i, c in enumerate(tb.str) if c in output.chars and c not in ta.chars]
    letters = [ta.str[i] for i in a_batch + a_concat] + [tb.str[i] for i in b_concat]
    out = _batch_tensordot(operands[positions[0]], operands[positions[1]],
                           a_contract, a_batch, a_concat, b_contract, b_batch, b_concat)
    return transpose(out, [letters.index(c) for c in output.str])


def _naive_step(terms, output, positions, operands):
    """MLX's ``einsum_naive``: give every letter an axis (in order of first
    appearance), put each operand's axes in that order with size-1 axes for
    the letters it lacks, multiply them all (broadcasting), sum the letters
    not in the output and transpose to the output's order."""
    char_to_ax = {}
    for t in terms:
        for c in t.str:
            char_to_ax.setdefault(c, len(char_to_ax))
    ops = []
    for t, pos in zip(terms, positions):
        op = operands[pos]
        if op.ndim != len(char_to_ax):
            op = reshape(op, op.shape + (1,) * (len(char_to_ax) - op.ndim))
        str_ax = [(c, i) for i, c in enumerate(t.str)]
        str_ax += [(c, len(t.str) + k) for k, c in
                   enumerate(c for c in char_to_ax if c not in t.chars)]
        order = [ax for _, ax in sorted(str_ax, key=lambda p: char_to_ax[p[0]])]
        if order != sorted(order):
            op = transpose(op, order)
        ops.append(op)
    out = ops[0]
    for op in ops[1:]:
        out = multiply(out, op)
    sum_axes = [ax for c, ax in char_to_ax.items() if c not in output.chars]
    if sum_axes:
        out = _sum(out, sum_axes)
    reorder = [char_to_ax[c] for c in output.str]
    reorder = [r - len([s for s in sum_axes if r > s]) for r in reorder]
    return transpose(out, reorder)


@shared_doc
def einsum(subscripts, *operands, stream=None):
    """``mx.einsum``: the Einstein summation of the ``operands`` that ``subscripts`` describes: products of their elements for each assignment of the letters, summed over the letters missing from the output.

    ``"ij,jk->ik"`` is a matrix product, ``"ii"`` a trace, ``"ij->ji"`` a
    transpose, ``"...ij,...jk"`` a batched product; without ``->`` the output
    is every letter used once, sorted. It runs along the path ``einsum_path``
    reports, each step built from ordinary ops (a gather for a repeated letter,
    ``sum``, ``multiply``, or a transpose + reshape + ``matmul``), so it has no
    primitive of its own. The result's dtype is the operands' promoted dtype; a
    contraction of two integer operands is a ``matmul`` and fails as MLX's does.
    An output letter that no input has raises a clear ``ValueError`` (MLX fails
    in a transpose).

    Arguments:
    - ``subscripts``: the equation, a string.
    - ``operands``: the arrays, one per comma-separated input term.

    Errors: ``ValueError`` for a count of operands that does not match (MLX:
    "[einsum] Number of operands, 1, does not match number of input subscripts,
    2"), a term whose length is not its operand's number of dimensions
    ("[einsum] Invalid number of subscripts 1 for input 0 with 2 dimensions."),
    sizes that disagree on a letter, and integer contractions ("[matmul] Only
    inexact types are supported ..."); ``RuntimeError`` ("std::bad_cast") for an
    operand that is not an array.

    >>> mx.einsum("ij,jk->ik", mx.array([[1.0, 2.0]]), mx.array([[3.0], [4.0]]))
    array([[11]], dtype=float32)
    >>> mx.einsum("ii", mx.arange(4).reshape(2, 2))
    array(3, dtype=int32)
    >>> mx.einsum("i,j->ij", mx.array([1.0, 2.0]), mx.array([3.0, 4.0]))
    array([[3, 4],
           [6, 8]], dtype=float32)
    """
    _check_call(subscripts, operands, _EINSUM, "einsum")
    path, _ = _path_helper(subscripts, operands, "einsum")
    inputs = {c for terms, _, _ in path for t in terms for c in t.str}
    for c in path[-1][1].str:
        if c not in inputs:
            # MLX builds a wrong transpose here and fails in it.
            raise ValueError(
                f"[einsum] Output subscript '{c}' does not appear in any input subscript.")
    operands = list(operands)
    for terms, output, positions in path:
        terms = [t.copy() for t in terms]
        _preprocess(terms, output, positions, operands)
        if len(terms) == 2 and any(c not in output.chars for c in terms[0].chars):
            operands.append(_dot_step(terms, output, positions, operands))
        else:
            operands.append(_naive_step(terms, output, positions, operands))
        for pos in reversed(positions):
            del operands[pos]
    return operands[0]
