"""The order in which MLX's ``std::unordered_map``s hand their keys to Python.

MLX builds several dictionaries it returns in C++ hash maps: ``mx.load``'s
arrays and metadata (mlx/io/safetensors.cpp, gguf.cpp and python/src/load.cpp
``mlx_load_npz_helper``), the maps ``savez`` and ``save_gguf`` write their
members from, the records ``export_function`` gives a callback and the keyword
arguments it calls the function with (mlx/export.cpp, python/src/export.cpp).
Python sees each one in the map's iteration order, which is neither the
insertion order nor sorted: it is what GNU libstdc++ (MLX's Linux wheels)
makes of the keys' hashes. That order is deterministic: the same keys inserted
in the same order iterate in the same order in every run and process (the
hash has a fixed seed). So mlxref reproduces it, from what libstdc++ does:

- a string's hash is ``std::_Hash_bytes`` of its UTF-8 bytes with the seed
  ``0xc70f6907``: a 64-bit MurmurHash2 variant (``string_hash``); an int's is
  the int itself.
- the nodes form one singly linked list; each bucket remembers the node
  *before* its first node. A key whose bucket is empty goes to the front of
  the list; otherwise it goes first in its bucket.
- a new map has one bucket; the first insertion makes 13 (room for at least
  11), and a map grows to the next size in libstdc++'s table of primes once
  it holds more keys than buckets (at least doubling). Growing relinks the
  nodes in list order into the new buckets, by the same front-of-list rule.

``iteration_order(keys)`` replays those insertions (a default-constructed
map, keys inserted one by one, as every one of MLX's maps above is built) and
returns the keys in the order the map iterates them. Checked against MLX
0.32.4 by tests/core/test_unordered_map.py. (MLX's macOS wheels use libc++,
whose order differs; mlxref follows the Linux build, as it does elsewhere.)
"""

import bisect

_MASK = (1 << 64) - 1
_MUL = 0xC6A4A793_5BD1E995  # MurmurHash64A's multiplier
_SEED = 0xC70F6907  # what std::hash<std::string> passes to _Hash_bytes


def _shift_mix(v):
    return v ^ (v >> 47)


def string_hash(key):
    """``std::hash<std::string>`` of ``key`` (a str, as UTF-8, or bytes), 64-bit libstdc++."""
    data = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    n = len(data)
    h = (_SEED ^ (n * _MUL)) & _MASK
    whole = n - n % 8
    for i in range(0, whole, 8):  # eight bytes at a time, little-endian
        word = int.from_bytes(data[i:i + 8], "little")
        h ^= (_shift_mix((word * _MUL) & _MASK) * _MUL) & _MASK
        h = (h * _MUL) & _MASK
    if n % 8:  # the tail, also little-endian
        h ^= int.from_bytes(data[whole:], "little")
        h = (h * _MUL) & _MASK
    return _shift_mix((_shift_mix(h) * _MUL) & _MASK)


def int_hash(key):
    """``std::hash<int>``: the value itself (as a 64-bit size_t)."""
    return key & _MASK


# The bucket counts libstdc++ grows through (its __prime_list, up to 2**32; a
# map with more keys than the last one is far beyond what mlxref can hold).
_PRIMES = (
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79,
    83, 89, 97, 103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227,
    241, 257, 277, 293, 313, 337, 359, 383, 409, 439, 467, 503, 541, 577, 619, 661,
    709, 761, 823, 887, 953, 1031, 1109, 1193, 1289, 1381, 1493, 1613, 1741, 1879,
    2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739, 4027, 4349, 4703, 5087,
    5503, 5953, 6427, 6949, 7517, 8123, 8783, 9497, 10273, 11113, 12011, 12983,
    14033, 15173, 16411, 17749, 19183, 20753, 22447, 24281, 26267, 28411, 30727,
    33223, 35933, 38873, 42043, 45481, 49201, 53201, 57557, 62233, 67307, 72817,
    78779, 85229, 92203, 99733, 107897, 116731, 126271, 136607, 147793, 159871,
    172933, 187091, 202409, 218971, 236897, 256279, 277261, 299951, 324503, 351061,
    379787, 410857, 444487, 480881, 520241, 562841, 608903, 658753, 712697, 771049,
    834181, 902483, 976369, 1056323, 1142821, 1236397, 1337629, 1447153, 1565659,
    1693859, 1832561, 1982627, 2144977, 2320627, 2510653, 2716249, 2938679, 3179303,
    3439651, 3721303, 4026031, 4355707, 4712381, 5098259, 5515729, 5967347, 6456007,
    6984629, 7556579, 8175383, 8844859, 9569143, 10352717, 11200489, 12117689,
    13109983, 14183539, 15345007, 16601593, 17961079, 19431899, 21023161, 22744717,
    24607243, 26622317, 28802401, 31160981, 33712729, 36473443, 39460231, 42691603,
    46187573, 49969847, 54061849, 58488943, 63278561, 68460391, 74066549, 80131819,
    86693767, 93793069, 101473717, 109783337, 118773397, 128499677, 139022417,
    150406843, 162723577, 176048909, 190465427, 206062531, 222936881, 241193053,
    260944219, 282312799, 305431229, 330442829, 357502601, 386778277, 418451333,
    452718089, 489790921, 529899637, 573292817, 620239453, 671030513, 725980837,
    785430967, 849749479, 919334987, 994618837, 1076067617, 1164186217, 1259520799,
    1362662261, 1474249943, 1594975441, 1725587117, 1866894511, 2019773507,
    2185171673, 2364114217, 2557710269, 2767159799, 2993761039, 3238918481,
    3504151727, 3791104843, 4101556399, 4294967291,
)
# Small requests are answered from a short table (libstdc++'s __fast_bkt).
_SMALL = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)

_FRONT = object()  # a bucket whose first node is the list's first node


class _Growth:
    """libstdc++'s ``_Prime_rehash_policy`` at its maximum load factor of 1."""

    def __init__(self):
        self.next_resize = 0  # 0: nothing allocated yet

    def bucket_count_for(self, n):
        if n < len(_SMALL):
            self.next_resize = _SMALL[n]
            return _SMALL[n]
        i = bisect.bisect_left(_PRIMES, n, 6, len(_PRIMES) - 1)
        self.next_resize = _PRIMES[i]
        return _PRIMES[i]

    def grow_to(self, buckets, size):
        """The new bucket count before inserting the key after ``size`` keys, or None."""
        if size + 1 <= self.next_resize:
            return None
        wanted = max(size + 1, 0 if self.next_resize else 11)
        if wanted >= buckets:
            return self.bucket_count_for(max(wanted + 1, 2 * buckets))
        self.next_resize = buckets
        return None


def iteration_order(keys, hash=string_hash):  # noqa: A002 (the C++ template's name)
    """The distinct ``keys``, inserted in this order into a new
    ``std::unordered_map``, in the order the map iterates them.

    >>> iteration_order(["a", "b", "c"])
    ['c', 'b', 'a']
    """
    first = None  # the list: its first key and each key's successor
    after = {}
    codes = {}
    n_buckets, buckets, growth = 1, [None], _Growth()

    def link(key, bucket, buckets):
        nonlocal first
        before = buckets[bucket]
        if before is None:  # to the front of the list, and the old front's bucket
            after[key], first = first, key  # now starts after this key
            if after[key] is not None:
                buckets[codes[after[key]] % len(buckets)] = key
            buckets[bucket] = _FRONT
        elif before is _FRONT:
            after[key], first = first, key
        else:
            after[key], after[before] = after[before], key

    for key in keys:
        if key in codes:
            continue
        grown = growth.grow_to(n_buckets, len(codes))
        if grown is not None:  # relink every node, in list order, into the new buckets
            n_buckets, buckets = grown, [None] * grown
            node, first = first, None
            while node is not None:
                following = after[node]
                link(node, codes[node] % n_buckets, buckets)
                node = following
        codes[key] = hash(key)
        link(key, codes[key] % n_buckets, buckets)
    order = []
    while first is not None:
        order.append(first)
        first = after[first]
    return order


def reordered(mapping):
    """``mapping`` (a dict with str keys) as MLX's map built from it hands it
    back: a new dict in ``iteration_order`` of its keys."""
    return {k: mapping[k] for k in iteration_order(list(mapping))}
