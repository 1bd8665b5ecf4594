"""The sort kernels: sort, argsort, partition, argpartition, searchsorted.

Read alongside: mlx/backend/cpu/sort.cpp, and libstdc++'s ``std::nth_element``
(bits/stl_algo.h ``__introselect``), which MLX's Linux CPU build calls.

MLX's CPU kernels work on one run of elements along ``axis`` at a time, with
one comparison, ``nan_aware_less``: numbers in their order (complex64 by real
part, then imaginary part), nans after every number and equal to each other.
The argument versions break ties between equal elements by index.

- ``sort`` and ``argsort`` use ``std::stable_sort``. With an order like this
  one every stable sort gives the same result, so Python's ``sorted`` gives
  MLX's output, ties and nans included.
- ``partition`` and ``argpartition`` use ``std::nth_element``, whose output is
  only specified at ``kth``; the elements before it are the smaller ones in an
  order the algorithm leaves behind. mlxref runs the same algorithm as the
  C++ library MLX's Linux CPU build is compiled against (libstdc++'s
  introselect, ``nth_element`` below), so the whole output is MLX's there.
  MLX built against another C++ library (libc++ on macOS) may order the
  elements around ``kth`` differently; the partition property is the same.
- ``searchsorted`` is a binary search with ``nan_aware_less``.

complex64 elements are ordered by ``binary.complex_greater``, MLX's order on
complex64 (real parts, then imaginary parts).
Read next: reduce.py (the runs), mlxref/core/primitives/sort.py (the rules).
"""

from .binary import complex_greater
from .reduce import groups, ungroup


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
        return complex_greater(b, a)
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


def _map_runs(op, data, shape, axis, reorder):
    """``reorder`` applied to each run along ``axis``, turning SymPy's refusal
    to order symbols into an error that names the op."""
    try:
        return ungroup([reorder(run) for run in groups(data, shape, (axis,))], shape, (axis,))
    except TypeError:
        raise TypeError(f"[{op}] Cannot order symbolic elements; {op} needs numbers.") from None


# --- std::nth_element, as libstdc++ implements it -------------------------------------
# Introselect: partition around a median-of-three pivot and keep the side that
# holds ``nth``; at most 3 elements left, insertion sort them; after
# 2 * floor(log2(n)) partitions without getting there, select with a heap.


def nth_element(v, nth, less):
    """Reorder the list ``v`` in place so that ``v[nth]`` is the element a sort
    by ``less`` would put there, smaller ones before it and larger after it."""
    first, last = 0, len(v)
    if nth == last:
        return
    depth = 2 * (last.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            heap_select(v, first, nth + 1, last, less)
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


def heap_select(v, first, middle, last, less):
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


# --- the kernels --------------------------------------------------------------------
# Each takes the elements ``data`` of an array of ``shape`` and works along ``axis``.


def sort(data, shape, axis):
    return _map_runs("sort", data, shape, axis, lambda run: sorted(run, key=_sort_key))


def argsort(data, shape, axis):
    def order(run):
        return sorted(range(len(run)), key=lambda i: _sort_key(run[i]))

    return _map_runs("argsort", data, shape, axis, order)


def partition(data, shape, axis, kth):
    def reorder(run):
        run = list(run)
        nth_element(run, kth, _nan_aware_less)
        return run

    return _map_runs("partition", data, shape, axis, reorder)


def argpartition(data, shape, axis, kth):
    def order(run):
        indices = list(range(len(run)))
        nth_element(indices, kth, _index_less(run))
        return indices

    return _map_runs("argpartition", data, shape, axis, order)


def searchsorted(seq, values, right):
    """For each of ``values``, the first place in the 1-D ``seq`` whose element
    is not below it (``right``: the first whose element is above it), by
    MLX's binary search: on a sequence that is not sorted the answer is
    whatever that search finds, as in MLX."""
    less = _nan_aware_less
    n = len(seq)

    def bound(v):
        lo, hi = 0, n
        while lo < hi:
            mid = lo + (hi - lo) // 2
            below = not less(v, seq[mid]) if right else less(seq[mid], v)
            if below:
                lo = mid + 1
            else:
                hi = mid
        return lo

    return [bound(v) for v in values]
