"""Random bits: Threefry 2x32 hashes of counters under a key, as MLX's CPU kernel writes them.

Read alongside: mlx/backend/cpu/threefry.cpp (``threefry2x32_hash``) and
``RandomBits::eval_cpu`` in mlx/backend/cpu/primitives.cpp (which counters,
and how the words fill each key's share of the output).
Read next: mlxref/core/random.py (every sampler, composed from these bits
with ops, in MLX's order).
"""

_MASK32 = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(key, first, second):
    """MLX's ``threefry2x32_hash``: Threefry 2x32 with 20 rounds, hashing
    counter pairs ``(first[i], second[i])`` under a pair of key words; the
    hashed pairs come back as two lists.

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


def random_bits(keys, size, width):
    """``size`` unsigned integers of ``width`` bytes from the flat key pairs
    ``keys``: each key fills its share of the output, in order. A key's share
    is ``bytes`` bytes, made of ``ceil(bytes / 4)`` words (``random_words``)
    read little-endian, the last word cut short if the share is not a whole
    number of words."""
    num_keys = len(keys) // 2
    per_key = size // num_keys if num_keys else 0
    nbytes = per_key * width
    out = []
    for i in range(num_keys):
        words = random_words((keys[2 * i], keys[2 * i + 1]), (nbytes + 3) // 4)
        if width == 4:
            out += words
            continue
        raw = b"".join(w.to_bytes(4, "little") for w in words)[:nbytes]
        out += [int.from_bytes(raw[j : j + width], "little") for j in range(0, nbytes, width)]
    return out
