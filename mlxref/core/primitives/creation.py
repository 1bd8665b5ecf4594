"""Primitives that create arrays: ``Arange`` (no inputs), ``Full`` and
``RandomBits`` (random bits from a key).

Read alongside: mlx/primitives.h (``Arange``, ``Full``, ``RandomBits``),
mlx/ops.cpp (``arange``, ``full``), mlx/backend/cpu/arange.h, and for the
random bits mlx/backend/cpu/threefry.cpp and ``RandomBits::eval_cpu`` in
mlx/backend/cpu/primitives.cpp.

Everything else in the creation family (zeros, ones, eye, linspace, ...) is
composed from these and other ops, as in MLX.
"""

import math

from .. import dtypes as _dt
from .. import ops
from .base import Copy, Primitive, make_array


def arange_size(start, stop, step):
    """The number of elements ``arange(start, stop, step)`` has (MLX's rule)."""
    return max(math.ceil((stop - start) / step), 0)


class Arange(Primitive):
    """``[start, start + step, ...)`` below ``stop``; a node with no inputs.

    MLX's Arange reads the dtype from its output array; an mlxref primitive
    gives its outputs' dtypes (``output_dtypes``), so it keeps the dtype
    itself (not printed: it is the node's dtype anyway).

    It has no inputs, so it never depends on a vmapped input and never has
    its ``vmap`` rule called; the rule raises MLX's default message.
    """

    def __init__(self, start, stop, step, dtype):
        self.start, self.stop, self.step = start, stop, step
        self.dtype = dtype

    def params(self):
        return {"start": self.start, "stop": self.stop, "step": self.step}

    def output_shapes(self, inputs):
        return [(arange_size(self.start, self.stop, self.step),)]

    def output_dtypes(self, inputs):
        return [self.dtype]

    def eval(self, inputs):
        size = arange_size(self.start, self.stop, self.step)
        if self.dtype.is_inexact:
            start, step = float(self.start), float(self.step)
            return [[start + i * step for i in range(size)]]
        # MLX's CPU kernel casts start and start + step to the integer type
        # first (truncating), then steps by their difference: so
        # arange(0, 3, 0.5, dtype=int32) is six zeros.
        first = int(self.start)
        step = int(self.start + self.step) - first
        return [[first + i * step for i in range(size)]]


class Full(Copy):
    """A contiguous copy of its (already broadcast and cast) input.

    ``full``, ``zeros``, ``ones`` and their ``_like`` versions end in this
    node. Its derivative is the identity in both modes, as a ``Copy``'s; the
    summing over the broadcast axes happens in the ``Broadcast`` node below
    it. Unlike a ``Copy`` it makes a new list: the broadcast below is a view
    of a one-element buffer (``Primitive.view``), and MLX's ``Full`` copies it
    into a buffer of its own, which the memory counters must see.

    MLX 0.32's ``Full::vjp`` returns ``cotangent * input`` instead, so there
    ``grad(lambda x: mx.full((3,), x).sum())(mx.array(2.0))`` is 6, where the
    derivative is 3. mlxref does not mirror that: its rule is the identity,
    which the SymPy check and finite differences confirm. (``Full::jvp``
    is the identity in MLX too.)
    """

    def eval(self, inputs):
        return [list(inputs[0].data())]

    def vmap(self, inputs, axes):
        """MLX's Full::vmap: the input is already broadcast to the example's
        shape (the ``Broadcast`` node below got the batch axis), so the batched
        copy is a copy of the batched input, on the same batch axis."""
        return [make_array(Full(), inputs)], list(axes)


# --- random bits ------------------------------------------------------------------

_MASK32 = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(key, first, second):
    """MLX's ``threefry2x32_hash`` (mlx/backend/cpu/threefry.cpp): Threefry 2x32
    with 20 rounds, hashing counter pairs ``(first[i], second[i])`` under a
    pair of key words; the hashed pairs come back as two lists.

    The words are Python ints kept to 32 bits with a mask, so every addition
    wraps as C's ``uint32_t`` does. Each step runs over all the pairs at once
    (a list comprehension per step), which is what keeps it fast in Python.
    """
    k0, k1 = key
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    m = _MASK32
    x0 = [(c + k0) & m for c in first]
    x1 = [(c + k1) & m for c in second]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = [(a + b) & m for a, b in zip(x0, x1)]
            x1 = [((b << r) & m | (b >> (32 - r))) ^ a for a, b in zip(x0, x1)]
        add0, add1 = ks[(i + 1) % 3], (ks[(i + 2) % 3] + i + 1) & m
        x0 = [(a + add0) & m for a in x0]
        x1 = [(b + add1) & m for b in x1]
    return x0, x1


def random_words(key, n):
    """The ``n`` uint32 words MLX's CPU kernel writes for one key.

    Word ``j`` of the first half and word ``j`` of the second half are the
    two halves of the hash of the counter pair ``(j, j + half)``; an odd
    count puts one more word in the middle, the first half of the hash of
    ``(half, 0)``, and the second half starts one word later.
    """
    half, odd = n // 2, n % 2
    low, high = threefry2x32(key, range(half), range(half + odd, n))
    if not odd:
        return low + high
    (middle,), _ = threefry2x32(key, [half], [0])
    return low + [middle] + high


_BITS_DTYPES = {1: _dt.uint8, 2: _dt.uint16, 4: _dt.uint32}


class RandomBits(Primitive):
    """``shape`` random unsigned integers of ``width`` bytes from a uint32 key.

    The input is a key of shape ``(2,)``, or under vmap a stack of keys
    ``(..., 2)``: each key fills its share of the output, in order. A key's
    share is ``bytes`` bytes, made of ``ceil(bytes / 4)`` words
    (``random_words``) read little-endian, the last word cut short if the
    share is not a whole number of words.

    The bits are integers of the key: MLX defines no vjp or jvp for them
    (so they raise its message). The vmap rule is MLX's: the key's batch
    axis becomes an axis of the output shape, at the same place.
    """

    def __init__(self, shape, width):
        self.shape, self.width = tuple(shape), width

    def params(self):
        return {"shape": self.shape, "width": self.width}

    def output_shapes(self, inputs):
        return [self.shape]

    def output_dtypes(self, inputs):
        return [_BITS_DTYPES[self.width]]

    def vmap(self, inputs, axes):
        (key,), (kax,) = inputs, axes
        if kax is None:
            return [make_array(self, [key])], [None]
        if kax == key.ndim - 1:  # the last axis holds the key pair: batch the one before
            order = list(range(key.ndim))
            order[kax], order[kax - 1] = order[kax - 1], order[kax]
            key = ops.transpose(key, order)
            kax -= 1
        shape = self.shape[:kax] + (key.shape[kax],) + self.shape[kax:]
        return [make_array(RandomBits(shape, self.width), [key])], [kax]

    def eval(self, inputs):
        (keys,) = inputs
        data = keys.data()
        num_keys = len(data) // 2
        size = math.prod(self.shape)
        per_key = size // num_keys if num_keys else 0
        nbytes = per_key * self.width
        out = []
        for i in range(num_keys):
            words = random_words((data[2 * i], data[2 * i + 1]), (nbytes + 3) // 4)
            if self.width == 4:
                out += words
                continue
            raw = b"".join(w.to_bytes(4, "little") for w in words)[:nbytes]
            out += [int.from_bytes(raw[j : j + self.width], "little")
                    for j in range(0, nbytes, self.width)]
        return [out]


class Load(Primitive):
    """Elements read from a file when the node is evaluated; no inputs.

    MLX's ``Load`` (mlx/primitives.h) reads its bytes from a reader at an
    offset; here ``read`` is a function (made by mlxref/core/io) returning
    the flat elements, already as ``dtype`` stores them, or raising the
    error for a file that cannot be read (MLX's errors at eval, too).
    ``source`` names the file in the node's repr.

    Like ``Arange`` it has no inputs, so a transform never calls its rules.
    """

    moves_elements = True  # ``read`` gives stored values

    def __init__(self, read, shape, dtype, source):
        self.read, self.shape, self.dtype, self.source = read, tuple(shape), dtype, source

    def params(self):
        return {"file": self.source}

    def output_shapes(self, inputs):
        return [self.shape]

    def output_dtypes(self, inputs):
        return [self.dtype]

    def eval(self, inputs):
        return [self.read()]
