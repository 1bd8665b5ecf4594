"""The order MLX's C++ hash maps give their keys to Python (mlxref/core/unordered_map.py),
against MLX 0.32.4: string keys through ``mx.load`` of a safetensors file (MLX inserts
its keys sorted into a ``std::unordered_map``), over sizes that cross several of the
map's growths (13, 29, 59, 127, 257, 541 and 1109 buckets). The int-keyed map of
``import_function``'s traces is checked through its error message
(tests/core/transforms/test_export.py)."""

import random

import pytest

from mlxref.core.unordered_map import iteration_order, string_hash

from support import needs_mlx, real_mx

SIZES = [1, 2, 3, 12, 13, 14, 29, 30, 59, 60, 200, 700]


def _keys(n, seed):
    """``n`` distinct names like a model's, some with non-ASCII letters
    (the hash reads UTF-8 bytes, so their lengths differ from the str's)."""
    rng = random.Random(seed)
    keys = set()
    while len(keys) < n:
        stem = rng.choice(("layers", "model.embed_tokens", "lm_head", "é", "层"))
        keys.add(f"{stem}.{rng.randrange(10 ** rng.randrange(1, 7))}.{len(keys)}")
    return sorted(keys)


@pytest.mark.mlx
@needs_mlx
@pytest.mark.parametrize("n", SIZES)
def test_string_keys_iterate_in_mlxs_order(tmp_path, n):
    keys = _keys(n, n)
    path = str(tmp_path / "k.safetensors")
    real_mx.save_safetensors(path, {k: real_mx.array([1]) for k in keys})
    assert iteration_order(keys) == list(real_mx.load(path))


def test_string_hash_reads_utf8_bytes_eight_at_a_time():
    """The hash of a str is that of its UTF-8 bytes, and every byte counts,
    including those after the last whole eight-byte word."""
    assert string_hash("é") == string_hash("é".encode())
    words = ["", "a", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghabcdefgh"]
    hashes = [string_hash(w) for w in words]
    assert len(set(hashes)) == len(words)
    assert string_hash("abcdefgh" + "x") != string_hash("abcdefgh" + "y")
    assert all(0 <= h < 2 ** 64 for h in hashes)
