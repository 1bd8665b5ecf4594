"""Sort and selection primitives: Sort, ArgSort, Partition, ArgPartition,
SearchSorted.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``Sort``, ``ArgSort``,
``Partition``, ``ArgPartition``, ``SearchSorted``: their vjp, jvp and vmap rules) and
mlx/backend/cpu/sort.cpp for the forward rules.

MLX's CPU kernels work on one run of elements along ``axis`` at a time, with
one comparison, ``nan_aware_less``: numbers in their order (complex64 by real
part, then imaginary part), nans after every number and equal to each other.
The argument versions break ties between equal elements by index.

- ``Sort`` and ``ArgSort`` use ``std::stable_sort``. With an order like this
  one every stable sort gives the same result, so Python's ``sorted`` gives
  MLX's output, ties and nans included.
- ``Partition`` and ``ArgPartition`` use ``std::nth_element``, whose output is
  only specified at ``kth``; the elements before it are the smaller ones in an
  order the algorithm leaves behind. mlxref runs the same algorithm as the
  C++ library MLX's Linux CPU build is compiled against (libstdc++'s
  introselect, ``_nth_element`` below), so the whole output is MLX's there.
  MLX built against another C++ library (libc++ on macOS) may order the
  elements around ``kth`` differently; the partition property is the same.

The derivative rules are written with mlxref ops, so a gradient is a lazy graph
that can be differentiated again.
"""

from .. import dtypes as _dt
from .. import ops
from .base import Primitive, make_array
from ..backend.cpu.binary import complex_greater as _complex_greater
from .reduction import _groups, _shift_axes, _unbatched, _ungroup


# --- the order ----------------------------------------------------------------------


def _sort_key(v):
    """MLX's ``nan_aware_less`` as a key: numbers in order, nans after them.

    complex64 compares by real part, then imaginary part; a nan in either part
    makes it a nan.
    """
    if v != v:
        return (True, 0)
    if isinstance(v, complex):
        return (False, (v.real, v.imag))
    return (False, v)


def _nan_aware_less(a, b):
    """MLX's ``nan_aware_less(a, b)`` (mlx/backend/cpu/sort.cpp)."""
    if a != a:
        return False
    if b != b:
        return True
    if isinstance(a, complex):
        return _complex_greater(b, a)
    return bool(a < b)


def _index_less(run):
    """The comparison MLX's ``argpartition`` kernel sorts indices of ``run`` by:
    ``nan_aware_less`` of the elements, equal elements by index."""

    def less(i, j):
        a, b = run[i], run[j]
        if a != a:
            return False
        if b != b:
            return True
        return _nan_aware_less(a, b) or (a == b and i < j)

    return less


def _ordering(op, sort_runs):
    """Run ``sort_runs``, turning SymPy's refusal to order symbols into an error
    that names the op."""
    try:
        return sort_runs()
    except TypeError:
        raise TypeError(f"[{op}] Cannot order symbolic elements; {op} needs numbers.") from None


# --- std::nth_element, as libstdc++ implements it -------------------------------------
# Introselect: partition around a median-of-three pivot and keep the side that
# holds ``nth``; at most 3 elements left, insertion sort them; after
# 2 * floor(log2(n)) partitions without getting there, select with a heap.


def _nth_element(v, nth, less):
    """Reorder the list ``v`` in place so that ``v[nth]`` is the element a sort
    by ``less`` would put there, smaller ones before it and larger after it."""
    first, last = 0, len(v)
    if nth == last:
        return
    depth = 2 * (last.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(v, first, nth + 1, last, less)
            v[first], v[nth] = v[nth], v[first]
            return
        depth -= 1
        cut = _partition_around_pivot(v, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(v, first, last, less)


def _partition_around_pivot(v, first, last, less):
    """Move the median of ``v[first + 1]``, the middle and the last element to
    ``first``, then partition the rest around it (Hoare's scheme); the start
    of the upper part."""
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    if less(v[a], v[b]):
        median = b if less(v[b], v[c]) else c if less(v[a], v[c]) else a
    else:
        median = a if less(v[a], v[c]) else c if less(v[b], v[c]) else b
    v[first], v[median] = v[median], v[first]
    pivot = v[first]
    lo, hi = first + 1, last
    while True:
        while less(v[lo], pivot):
            lo += 1
        hi -= 1
        while less(pivot, v[hi]):
            hi -= 1
        if lo >= hi:
            return lo
        v[lo], v[hi] = v[hi], v[lo]
        lo += 1


def _insertion_sort(v, first, last, less):
    for i in range(first + 1, last):
        value = v[i]
        if less(value, v[first]):
            v[first + 1 : i + 1] = v[first:i]
            v[first] = value
        else:
            j = i
            while less(value, v[j - 1]):
                v[j] = v[j - 1]
                j -= 1
            v[j] = value


def _heap_select(v, first, middle, last, less):
    """Keep the ``middle - first`` smallest elements in a max-heap at the front."""
    size = middle - first
    for parent in range((size - 2) // 2, -1, -1):
        _sift(v, first, parent, size, v[first + parent], less)
    for i in range(middle, last):
        if less(v[i], v[first]):
            value, v[i] = v[i], v[first]
            _sift(v, first, 0, size, value, less)


def _sift(v, first, hole, size, value, less):
    """Fill the hole at ``hole`` of the heap ``v[first:first + size]`` with
    ``value``: walk the hole down to a leaf along the larger children, then
    bring ``value`` up from there."""
    top = child = hole
    while child < (size - 1) // 2:
        child = 2 * (child + 1)
        if less(v[first + child], v[first + child - 1]):
            child -= 1
        v[first + hole] = v[first + child]
        hole = child
    if size % 2 == 0 and child == (size - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(v[first + parent], value):
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value


# --- the primitives -----------------------------------------------------------------


class _AlongAxis(Primitive):
    """A primitive that reorders each run of elements along ``axis`` (MLX's
    four sort primitives). Its vmap rule, MLX's for all four, applies the same
    op along the axis shifted past the batch axis."""

    abstract = True

    def __init__(self, axis):
        self.axis = axis

    def params(self):
        return {"axis": self.axis}

    def _batched(self, axis):
        return type(self)(axis)

    def vmap(self, inputs, axes):
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        (axis,) = _shift_axes((self.axis,), ax)
        return [make_array(self._batched(axis), [x])], [ax]

    def _map_runs(self, x, reorder):
        return _ungroup([reorder(run) for run in _groups(x, (self.axis,))],
                        x.shape, (self.axis,))


class _Permuted(_AlongAxis):
    """A primitive whose output is ``x`` permuted along ``axis`` by the indices
    ``_order(x)`` (MLX's ``Sort`` and ``Partition``).

    MLX's rules: the permutation is locally constant, so it is cut from the
    graph by ``stop_gradient`` (a second derivative sees none of it). The jvp
    gathers the tangent with it; the vjp scatters the cotangent back to the
    positions the elements came from.
    """

    abstract = True

    def vjp(self, primals, cotangents, argnums, outputs):
        (x,) = primals
        order = ops.stop_gradient(self._order(x))
        return [ops.put_along_axis(ops.zeros_like(x), order, cotangents[0], self.axis)]

    def jvp(self, primals, tangents, argnums):
        order = ops.stop_gradient(self._order(primals[0]))
        return [ops.take_along_axis(tangents[0], order, self.axis)]


class Sort(_Permuted):
    """``x`` sorted along ``axis`` (MLX's ``Sort``): stable, nans last. The
    rules permute by ``argsort(x)``."""

    def _order(self, x):
        return ops.argsort(x, self.axis)

    def eval(self, inputs):
        (x,) = inputs
        return [_ordering("sort", lambda: self._map_runs(x, lambda run: sorted(run, key=_sort_key)))]


class ArgSort(_AlongAxis):
    """The indices that sort ``x`` along ``axis``, as uint32 (MLX's ``ArgSort``).

    The sort is stable, as MLX's CPU kernel's ``std::stable_sort``: equal
    elements keep their order, and nans go last. MLX's rules: an index is
    piecewise constant, so the vjp and jvp are zeros (the jvp's uint32).
    """

    def output_dtypes(self, inputs):
        return [_dt.uint32]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.zeros_like(primals[0])]

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros(primals[0].shape, _dt.uint32)]

    def eval(self, inputs):
        (x,) = inputs

        def order(run):
            return sorted(range(len(run)), key=lambda i: _sort_key(run[i]))

        return [_ordering("argsort", lambda: self._map_runs(x, order))]


class Partition(_Permuted):
    """``x`` partitioned along ``axis`` around ``kth`` (MLX's ``Partition``).

    Element ``kth`` of each run is the one a sort puts there, the smaller
    ones come before it and the larger ones after, in the order ``std::
    nth_element`` leaves them (``_nth_element``). ``kth`` is non-negative
    here (the op adds the axis's size to a negative one). The rules permute
    by ``argpartition(x, kth)``.
    """

    def __init__(self, kth, axis):
        self.kth = kth
        self.axis = axis

    def params(self):
        return {"kth": self.kth, "axis": self.axis}

    def _batched(self, axis):
        return type(self)(self.kth, axis)

    def _order(self, x):
        return ops.argpartition(x, self.kth, self.axis)

    def eval(self, inputs):
        (x,) = inputs

        def partition(run):
            run = list(run)
            _nth_element(run, self.kth, _nan_aware_less)
            return run

        return [_ordering("partition", lambda: self._map_runs(x, partition))]


class ArgPartition(Partition):
    """The indices that partition ``x`` along ``axis`` around ``kth``, as
    uint32 (MLX's ``ArgPartition``); ties are broken by index.

    MLX's rules: zeros. Its jvp gives ``zeros_like`` of the tangent, so of the
    tangent's dtype rather than uint32 (unlike ``ArgSort``'s); mlxref does
    the same.
    """

    def output_dtypes(self, inputs):
        return [_dt.uint32]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.zeros_like(primals[0])]

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros_like(tangents[0])]

    def eval(self, inputs):
        (x,) = inputs

        def argpartition(run):
            order = list(range(len(run)))
            _nth_element(order, self.kth, _index_less(run))
            return order

        return [_ordering("argpartition", lambda: self._map_runs(x, argpartition))]


class SearchSorted(Primitive):
    """Where each value would go in a sorted 1-D sequence, as uint32 (MLX's
    ``SearchSorted``; inputs: the sequence, then the values, both already of
    one dtype).

    The forward rule is MLX's CPU kernel: a binary search with
    ``nan_aware_less``, the first place whose element is not below the value
    (``right``: the first whose element is above it). On a sequence that is
    not sorted the answer is whatever that search finds, as in MLX.

    MLX's rules: an index is piecewise constant, so the vjp is zeros for each
    input asked for and the jvp uint32 zeros shaped like the values. vmap
    batches the values only; a batched sequence is MLX's error.
    """

    moves_elements = True  # indices, which uint32 holds as they are

    def __init__(self, right):
        self.right = right

    def params(self):
        return {"right": self.right}

    def output_shapes(self, inputs):
        return [inputs[1].shape]

    def output_dtypes(self, inputs):
        return [_dt.uint32]

    def eval(self, inputs):
        seq, values = inputs[0].data(), inputs[1].data()
        n, right = len(seq), self.right

        def bound(v):
            lo, hi = 0, n
            while lo < hi:
                mid = lo + (hi - lo) // 2
                below = not _nan_aware_less(v, seq[mid]) if right else _nan_aware_less(seq[mid], v)
                if below:
                    lo = mid + 1
                else:
                    hi = mid
            return lo

        return [[bound(v) for v in values]]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.zeros_like(primals[i]) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros(primals[1].shape, _dt.uint32)]

    def vmap(self, inputs, axes):
        if axes[0] is not None:
            raise ValueError("[searchsorted] Cannot vmap over the sorted sequence, only over "
                             "the values being searched for.")
        return [make_array(SearchSorted(self.right), list(inputs))], [axes[1]]
