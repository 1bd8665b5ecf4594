"""The one-dimensional transforms MLX's CPU FFT runs, step by step in float32.

Read alongside: mlx/3rdparty/pocketfft.h (``sincos_2pibyn``, ``cfftp``,
``rfftp``, ``fftblue``, ``pocketfft_c``, ``pocketfft_r``), which
mlx/backend/cpu/fft.cpp calls for every float32 transform.

MLX's FFT works in float32: every sum and product of a transform is rounded
to float32 as it is formed, in an order fixed by the plan of the length. So
to give MLX's bits, this module follows the same plan and rounds each step
(``_f32``; double rounding through a double is harmless for one +, - or *).
A plan is:

- a table of the n-th roots of unity (``roots``): each computed in double
  from an angle reduced to the first eighth of a turn, then rounded to
  float32, so the roots at the eighth-turn symmetries are exact (the quarter
  turn is exactly ``i``; ``cmath.exp(2j * pi / 4)`` is not);
- for a complex line, Cooley-Tukey over the factors of n (8s and 4s, a 2,
  then the odd primes ascending), one butterfly per factor: radix 2, 4 and 8,
  a shared one for the odd primes up to 11, and a generic one beyond;
- for a real line, FFTPACK's real radix-2, 3, 4, 5 and generic steps on the
  "halfcomplex" layout ``[r0, r1, i1, r2, i2, ...]``;
- Bluestein's convolution, by a complex plan of a composite length at least
  2n - 1, when n has a large prime factor and pocketfft's cost guess says
  the convolution is cheaper.

Complex numbers are Python ``complex`` whose parts are float32 values;
``complex * float`` is avoided (Python would multiply by ``float + 0j`` and
could turn a signed zero or an inf into something else).
Read next: fft.py (the kernel: which lines, which axes, the scale).
"""

import functools
import math
import struct

_FLOAT32 = struct.Struct("f")
_FLOAT32_PAIR = struct.Struct("ff")
_FLOAT32_QUAD = struct.Struct("ffff")


def _f32(v):
    """A double rounded to float32 (C's cast: nearest even, inf beyond range)."""
    return _FLOAT32.unpack(_FLOAT32.pack(v))[0]


def _c32(v):
    """A complex whose parts are rounded to float32."""
    return complex(*_FLOAT32_PAIR.unpack(_FLOAT32_PAIR.pack(v.real, v.imag)))


def _scale(v, s):
    """``v * s`` for a complex ``v`` and a float32 ``s``, part by part."""
    return complex(*_FLOAT32_PAIR.unpack(_FLOAT32_PAIR.pack(v.real * s, v.imag * s)))


def _times_root(v, w, forward):
    """``v * conj(w)`` going forward, ``v * w`` going back: each product
    rounded, then each sum (pocketfft's ``special_mul``)."""
    vr, vi, wr, wi = v.real, v.imag, w.real, w.imag
    rr, ii, ir, ri = _FLOAT32_QUAD.unpack(_FLOAT32_QUAD.pack(vr * wr, vi * wi, vi * wr, vr * wi))
    if forward:
        return _c32(complex(rr + ii, ir - ri))
    return _c32(complex(rr - ii, ri + ir))


# --- the roots of unity -----------------------------------------------------------------


def _eighth_step(n):
    """The angle of an eighth of a turn divided by n. (pocketfft divides in
    long double, then rounds to double: for some n, 3 among them, that is an
    ulp away from this quotient, but no float32 root changes: checked for
    every n below 3000 and MLX's test lengths up to 18247.)"""
    return math.pi / (4 * n)


def _unit_root(x, n, step):
    """``exp(2 pi i x / n)`` in double, for ``0 <= x < n``. The angle is
    folded into the first eighth of a turn, so ``cos`` and ``sin`` only see
    angles up to pi / 4 and the points on the axes come out exact (a sign
    of zero included: at a quarter turn the real part is ``-sin(0)``)."""
    e = 8 * x  # the angle in units of step: 8 n is a whole turn
    if e >= 4 * n:  # the lower half: mirror it into the upper half, imaginary part negated
        re, im = _upper_half_root(8 * n - e, n, step)
        return re, -im
    return _upper_half_root(e, n, step)


def _upper_half_root(e, n, step):
    """(cos, sin) of the angle ``e * step`` for ``0 <= e <= 4 n`` (half a turn)."""
    if e >= 2 * n:  # the second quarter: turned by a quarter from the first
        e -= 2 * n
        if e < n:
            return -math.sin(e * step), math.cos(e * step)
        return -math.cos((2 * n - e) * step), math.sin((2 * n - e) * step)
    if e < n:
        return math.cos(e * step), math.sin(e * step)
    return math.sin((2 * n - e) * step), math.cos((2 * n - e) * step)


@functools.lru_cache(maxsize=64)
def roots(n):
    """``exp(2 pi i k / n)`` for ``k < n``, as float32 complex numbers, as
    pocketfft's twiddle table gives them: root k is the product (in double)
    of two roots from two short tables, a fine one (``k`` mod 2^s) and a
    coarse one (the multiples of 2^s), rounded to float32; the roots past
    half a turn are the conjugates of those before it."""
    step = _eighth_step(n)
    count = (n + 2) // 2
    shift = 1
    while (1 << shift) * (1 << shift) < count:
        shift += 1
    mask = (1 << shift) - 1
    fine = [(1.0, 0.0)] + [_unit_root(i, n, step) for i in range(1, mask + 1)]
    coarse = [(1.0, 0.0)] + [_unit_root(i * (mask + 1), n, step)
                             for i in range(1, (count + mask) // (mask + 1))]

    def root(k):
        conjugate = 2 * k > n
        if conjugate:
            k = n - k
        (ar, ai), (br, bi) = fine[k & mask], coarse[k >> shift]
        re, im = _f32(ar * br - ai * bi), _f32(ar * bi + ai * br)
        return complex(re, -im if conjugate else im)

    return tuple(root(k) for k in range(n))


def _constant(f, k, p):
    """``f(2 pi k / p)`` rounded to float32: the fixed roots of the radix-p steps."""
    return _f32(f(2 * math.pi * k / p))


_HALF_SQRT2 = _f32(math.sqrt(0.5))
_SQRT2 = _f32(math.sqrt(2.0))


# --- complex lines: Cooley-Tukey ----------------------------------------------------------


def complex_factors(n):
    """The radices of a complex plan of length n, in the order the steps
    run: 8s, then a 4, then any 2 moved to the front, then the odd primes."""
    factors = []
    while n % 8 == 0:
        factors.append(8)
        n //= 8
    while n % 4 == 0:
        factors.append(4)
        n //= 4
    if n % 2 == 0:
        n //= 2
        factors.append(2)
        factors[0], factors[-1] = factors[-1], factors[0]
    return factors + _odd_prime_factors(n)


def _odd_prime_factors(n):
    """The prime factors of an odd n, ascending, with repeats."""
    factors, d = [], 3
    while d * d <= n:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 2
    return factors + ([n] if n > 1 else [])


def _rotate_quarter(a, forward):
    """``a`` times -i going forward, times i going back (exact)."""
    return complex(a.imag, -a.real) if forward else complex(-a.imag, a.real)


def _butterfly2(x, forward):
    """Radix 2: the sum and the difference."""
    return [_c32(x[0] + x[1]), _c32(x[0] - x[1])]


def _butterfly4(x, forward):
    """Radix 4 (pocketfft's ``pass4``): two radix-2 layers, a quarter turn between."""
    t2, t1 = _c32(x[0] + x[2]), _c32(x[0] - x[2])
    t3, t4 = _c32(x[1] + x[3]), _rotate_quarter(_c32(x[1] - x[3]), forward)
    return [_c32(t2 + t3), _c32(t1 + t4), _c32(t2 - t3), _c32(t1 - t4)]


def _rotate_eighth(a, forward, odd):
    """``a`` times the eighth root of unity ``exp(-+ i pi / 4)`` (or, with
    ``odd``, the three-eighths one), with sqrt(1/2) rounded to float32."""
    r, i, h = a.real, a.imag, _HALF_SQRT2
    if not odd:
        if forward:
            return complex(_f32(h * _f32(r + i)), _f32(h * _f32(i - r)))
        return complex(_f32(h * _f32(r - i)), _f32(h * _f32(i + r)))
    if forward:
        return complex(_f32(h * _f32(i - r)), _f32(h * _f32(-r - i)))
    return complex(_f32(h * _f32(-r - i)), _f32(h * _f32(r - i)))


def _butterfly8(x, forward):
    """Radix 8 (pocketfft's ``pass8``): radix-2 layers with eighth and quarter turns."""
    a1, a5 = _c32(x[1] + x[5]), _c32(x[1] - x[5])
    a3, a7 = _c32(x[3] + x[7]), _c32(x[3] - x[7])
    a1, a3 = _c32(a1 + a3), _rotate_quarter(_c32(a1 - a3), forward)
    a7 = _rotate_quarter(a7, forward)
    a5, a7 = _c32(a5 + a7), _c32(a5 - a7)
    a5, a7 = _rotate_eighth(a5, forward, False), _rotate_eighth(a7, forward, True)
    a0, a4 = _c32(x[0] + x[4]), _c32(x[0] - x[4])
    a2, a6 = _c32(x[2] + x[6]), _rotate_quarter(_c32(x[2] - x[6]), forward)
    s02, d02, s46, d46 = _c32(a0 + a2), _c32(a0 - a2), _c32(a4 + a6), _c32(a4 - a6)
    return [_c32(s02 + a1), _c32(s46 + a5), _c32(d02 + a3), _c32(d46 + a7),
            _c32(s02 - a1), _c32(s46 - a5), _c32(d02 - a3), _c32(d46 - a7)]


@functools.lru_cache(maxsize=16)
def _small_prime_coefficients(p, forward):
    """For the radix-p butterfly (p = 3, 5, 7, 11): for each output u up to
    (p - 1) / 2, the cosines and signed sines of 2 pi u j / p for j up to
    (p - 1) / 2, each read from the fixed roots of the first half turn."""
    half, sign = (p - 1) // 2, -1 if forward else 1
    rows = []
    for u in range(1, half + 1):
        cosines, sines = [], []
        for j in range(1, half + 1):
            m = u * j % p
            folded = min(m, p - m)
            cosines.append(_constant(math.cos, folded, p))
            sines.append(sign * (1 if m <= half else -1) * _constant(math.sin, folded, p))
        rows.append((cosines, sines))
    return rows


def _butterfly_small_prime(x, forward):
    """The radix-p butterfly for p = 3, 5, 7, 11: the sums and differences
    of the inputs paired from both ends, then for each output pair u, p - u
    a cosine part (summed from x0 on) and i times a sine part, each sum
    formed left to right."""
    p = len(x)
    half = (p - 1) // 2
    sums = [_c32(x[j] + x[p - j]) for j in range(1, half + 1)]
    diffs = [_c32(x[j] - x[p - j]) for j in range(1, half + 1)]
    out = [None] * p
    total = x[0]
    for s in sums:
        total = _c32(total + s)
    out[0] = total
    for u, (cosines, sines) in enumerate(_small_prime_coefficients(p, forward), 1):
        even = x[0]
        for c, s in zip(cosines, sums):
            even = _c32(even + _scale(s, c))
        odd = _scale(diffs[0], sines[0])
        for y, d in zip(sines[1:], diffs[1:]):
            odd = _c32(odd + _scale(d, y))
        odd = complex(-odd.imag, odd.real)  # times i
        out[u], out[p - u] = _c32(even + odd), _c32(even - odd)
    return out


def _butterfly_prime(x, forward, base):
    """The radix-p butterfly for a prime p over 11 (pocketfft's ``passg``):
    the same pairing, the products of each output summed two by two.
    ``base`` holds the p-th roots of unity (``exp(2 pi i j / p)``)."""
    p = len(x)
    half = (p + 1) // 2
    w = [complex(b.real, -b.imag) if forward else b for b in base]
    h = list(x)
    for j in range(1, half):
        h[j], h[p - j] = _c32(x[j] + x[p - j]), _c32(x[j] - x[p - j])
    out = [None] * p
    total = h[0]
    for j in range(1, half):
        total = _c32(total + h[j])
    out[0] = total
    f = _f32
    for l in range(1, half):
        w1, w2 = w[l], w[2 * l]
        a_re = f(f(h[0].real + f(w1.real * h[1].real)) + f(w2.real * h[2].real))
        a_im = f(f(h[0].imag + f(w1.real * h[1].imag)) + f(w2.real * h[2].imag))
        b_re = f(f(-w1.imag * h[p - 1].imag) - f(w2.imag * h[p - 2].imag))
        b_im = f(f(w1.imag * h[p - 1].real) + f(w2.imag * h[p - 2].real))
        k, j = 2 * l, 3
        while j < half - 1:  # two terms at a time, their sum added
            k = (k + l) % p
            u1 = w[k]
            k = (k + l) % p
            u2 = w[k]
            hj, hj1, hc, hc1 = h[j], h[j + 1], h[p - j], h[p - j - 1]
            a_re = f(a_re + f(f(hj.real * u1.real) + f(hj1.real * u2.real)))
            a_im = f(a_im + f(f(hj.imag * u1.real) + f(hj1.imag * u2.real)))
            b_re = f(b_re - f(f(hc.imag * u1.imag) + f(hc1.imag * u2.imag)))
            b_im = f(b_im + f(f(hc.real * u1.imag) + f(hc1.real * u2.imag)))
            j += 2
        if j < half:
            k = (k + l) % p
            u1, hj, hc = w[k], h[j], h[p - j]
            a_re, a_im = f(a_re + f(hj.real * u1.real)), f(a_im + f(hj.imag * u1.real))
            b_re, b_im = f(b_re - f(hc.imag * u1.imag)), f(b_im + f(hc.real * u1.imag))
        a, b = complex(a_re, a_im), complex(b_re, b_im)
        out[l], out[p - l] = _c32(a + b), _c32(a - b)
    return out


_BUTTERFLIES = {2: _butterfly2, 4: _butterfly4, 8: _butterfly8, 3: _butterfly_small_prime,
                5: _butterfly_small_prime, 7: _butterfly_small_prime, 11: _butterfly_small_prime}


def _complex_step(x, p, l1, ido, forward, table):
    """One Cooley-Tukey step of radix p over the n-point line ``x``: ``l1``
    transforms already done, ``ido`` points each still to combine. Output u
    of column i >= 1 is then turned by the root ``u * l1 * i`` of ``table``."""
    n = len(table)
    butterfly = _BUTTERFLIES.get(p)
    if butterfly is None:
        base = [table[j * (n // p)] for j in range(p)]
        butterfly = functools.partial(_butterfly_prime, base=base)
    out = [0j] * len(x)
    for k in range(l1):
        for i in range(ido):
            ys = butterfly([x[i + ido * (j + p * k)] for j in range(p)], forward)
            for u, y in enumerate(ys):
                if i and u:
                    y = _times_root(y, table[u * l1 * i], forward)
                out[i + ido * (k + l1 * u)] = y
    return out


def _complex_plan(x, forward, scale):
    """The Cooley-Tukey transform of the complex line ``x`` (``cfftp``)."""
    n = len(x)
    if n == 1:
        return [_scale(x[0], scale)]
    table, l1 = roots(n), 1
    for p in complex_factors(n):
        x = _complex_step(x, p, l1, n // (l1 * p), forward, table)
        l1 *= p
    return [_scale(v, scale) for v in x] if scale != 1.0 else x


# --- real lines: FFTPACK's steps on the halfcomplex layout ---------------------------------
# A forward step of radix p reads l1 * p blocks of ido reals (``x[a + ido * (k + l1 * j)]``,
# block k of input j) and writes them as p halfcomplex blocks per k (``out[a + ido *
# (j + p * k)]``); a backward step reads and writes the other way round. Inside a
# block, position 0 is real and positions 2m - 1, 2m hold the real and imaginary
# parts of point m, turned by the root ``j * l1 * m``. The expressions follow
# pocketfft's ``radf*`` and ``radb*`` term by term: the rounding of each is MLX's.


def real_factors(n):
    """The radices of a real plan of length n: 4s, then any 2 moved to the
    front, then the odd primes ascending."""
    factors = []
    while n % 4 == 0:
        factors.append(4)
        n //= 4
    if n % 2 == 0:
        n //= 2
        factors.append(2)
        factors[0], factors[-1] = factors[-1], factors[0]
    return factors + _odd_prime_factors(n)


def _sum_diff(a, b):
    """``(a + b, a - b)``, each rounded to float32 (pocketfft's ``PM``)."""
    return _FLOAT32_PAIR.unpack(_FLOAT32_PAIR.pack(a + b, a - b))


def _conj_times(wr, wi, re, im):
    """``conj(w) * z`` as (real, imaginary), each product rounded, then each sum."""
    f = _f32
    return f(f(wr * re) + f(wi * im)), f(f(wr * im) - f(wi * re))


def _forward2(x, l1, ido, table):
    """A forward real step of radix 2 (pocketfft's ``radf2``)."""
    out = [0.0] * len(x)

    def cc(a, k, j):
        return x[a + ido * (k + l1 * j)]

    def at(a, j, k):
        return a + ido * (j + 2 * k)

    for k in range(l1):
        out[at(0, 0, k)], out[at(ido - 1, 1, k)] = _sum_diff(cc(0, k, 0), cc(0, k, 1))
        if ido % 2 == 0:
            out[at(0, 1, k)], out[at(ido - 1, 0, k)] = -cc(ido - 1, k, 1), cc(ido - 1, k, 0)
        for i in range(2, ido, 2):
            ic, w = ido - i, table[l1 * (i // 2)]
            tr2, ti2 = _conj_times(w.real, w.imag, cc(i - 1, k, 1), cc(i, k, 1))
            out[at(i - 1, 0, k)], out[at(ic - 1, 1, k)] = _sum_diff(cc(i - 1, k, 0), tr2)
            out[at(i, 0, k)], out[at(ic, 1, k)] = _sum_diff(ti2, cc(i, k, 0))
    return out


def _forward3(x, l1, ido, table):
    """A forward real step of radix 3 (``radf3``)."""
    f = _f32
    taur, taui = -0.5, _constant(math.sin, 1, 3)
    out = [0.0] * len(x)

    def cc(a, k, j):
        return x[a + ido * (k + l1 * j)]

    def at(a, j, k):
        return a + ido * (j + 3 * k)

    for k in range(l1):
        cr2 = f(cc(0, k, 1) + cc(0, k, 2))
        out[at(0, 0, k)] = f(cc(0, k, 0) + cr2)
        out[at(0, 2, k)] = f(taui * f(cc(0, k, 2) - cc(0, k, 1)))
        out[at(ido - 1, 1, k)] = f(cc(0, k, 0) + f(taur * cr2))
        for i in range(2, ido, 2):
            ic, m = ido - i, i // 2
            w2, w3 = table[l1 * m], table[2 * l1 * m]
            dr2, di2 = _conj_times(w2.real, w2.imag, cc(i - 1, k, 1), cc(i, k, 1))
            dr3, di3 = _conj_times(w3.real, w3.imag, cc(i - 1, k, 2), cc(i, k, 2))
            dr2, di2, dr3, di3 = f(dr2 + dr3), f(di2 + di3), f(di2 - di3), f(dr3 - dr2)
            out[at(i - 1, 0, k)] = f(cc(i - 1, k, 0) + dr2)
            out[at(i, 0, k)] = f(cc(i, k, 0) + di2)
            tr2, ti2 = f(cc(i - 1, k, 0) + f(taur * dr2)), f(cc(i, k, 0) + f(taur * di2))
            tr3, ti3 = f(taui * dr3), f(taui * di3)
            out[at(i - 1, 2, k)], out[at(ic - 1, 1, k)] = _sum_diff(tr2, tr3)
            out[at(i, 2, k)], out[at(ic, 1, k)] = _sum_diff(ti3, ti2)
    return out


def _forward4(x, l1, ido, table):
    """A forward real step of radix 4 (``radf4``)."""
    f, h = _f32, _HALF_SQRT2
    out = [0.0] * len(x)

    def cc(a, k, j):
        return x[a + ido * (k + l1 * j)]

    def at(a, j, k):
        return a + ido * (j + 4 * k)

    for k in range(l1):
        tr1, out[at(0, 2, k)] = _sum_diff(cc(0, k, 3), cc(0, k, 1))
        tr2, out[at(ido - 1, 1, k)] = _sum_diff(cc(0, k, 0), cc(0, k, 2))
        out[at(0, 0, k)], out[at(ido - 1, 3, k)] = _sum_diff(tr2, tr1)
        if ido % 2 == 0:
            e = ido - 1
            ti1 = f(-h * f(cc(e, k, 1) + cc(e, k, 3)))
            tr1 = f(h * f(cc(e, k, 1) - cc(e, k, 3)))
            out[at(e, 0, k)], out[at(e, 2, k)] = _sum_diff(cc(e, k, 0), tr1)
            out[at(0, 3, k)], out[at(0, 1, k)] = _sum_diff(ti1, cc(e, k, 2))
        for i in range(2, ido, 2):
            ic, m = ido - i, i // 2
            w2, w3, w4 = table[l1 * m], table[2 * l1 * m], table[3 * l1 * m]
            cr2, ci2 = _conj_times(w2.real, w2.imag, cc(i - 1, k, 1), cc(i, k, 1))
            cr3, ci3 = _conj_times(w3.real, w3.imag, cc(i - 1, k, 2), cc(i, k, 2))
            cr4, ci4 = _conj_times(w4.real, w4.imag, cc(i - 1, k, 3), cc(i, k, 3))
            tr1, tr4 = _sum_diff(cr4, cr2)
            ti1, ti4 = _sum_diff(ci2, ci4)
            tr2, tr3 = _sum_diff(cc(i - 1, k, 0), cr3)
            ti2, ti3 = _sum_diff(cc(i, k, 0), ci3)
            out[at(i - 1, 0, k)], out[at(ic - 1, 3, k)] = _sum_diff(tr2, tr1)
            out[at(i, 0, k)], out[at(ic, 3, k)] = _sum_diff(ti1, ti2)
            out[at(i - 1, 2, k)], out[at(ic - 1, 1, k)] = _sum_diff(tr3, ti4)
            out[at(i, 2, k)], out[at(ic, 1, k)] = _sum_diff(tr4, ti3)
    return out


def _five_constants():
    """cos and sin of 2 pi / 5 and of 4 pi / 5, rounded to float32."""
    return (_constant(math.cos, 1, 5), _constant(math.sin, 1, 5),
            _constant(math.cos, 2, 5), _constant(math.sin, 2, 5))


def _forward5(x, l1, ido, table):
    """A forward real step of radix 5 (``radf5``)."""
    f = _f32
    tr11, ti11, tr12, ti12 = _five_constants()
    out = [0.0] * len(x)

    def cc(a, k, j):
        return x[a + ido * (k + l1 * j)]

    def at(a, j, k):
        return a + ido * (j + 5 * k)

    for k in range(l1):
        c0 = cc(0, k, 0)
        cr2, ci5 = _sum_diff(cc(0, k, 4), cc(0, k, 1))
        cr3, ci4 = _sum_diff(cc(0, k, 3), cc(0, k, 2))
        out[at(0, 0, k)] = f(f(c0 + cr2) + cr3)
        out[at(ido - 1, 1, k)] = f(f(c0 + f(tr11 * cr2)) + f(tr12 * cr3))
        out[at(0, 2, k)] = f(f(ti11 * ci5) + f(ti12 * ci4))
        out[at(ido - 1, 3, k)] = f(f(c0 + f(tr12 * cr2)) + f(tr11 * cr3))
        out[at(0, 4, k)] = f(f(ti12 * ci5) - f(ti11 * ci4))
        for i in range(2, ido, 2):
            ic, m = ido - i, i // 2
            d = [_conj_times(table[j * l1 * m].real, table[j * l1 * m].imag,
                             cc(i - 1, k, j), cc(i, k, j)) for j in range(1, 5)]
            (dr2, di2), (dr3, di3), (dr4, di4), (dr5, di5) = d
            dr2, di2, dr5, di5 = f(dr2 + dr5), f(di2 + di5), f(di2 - di5), f(dr5 - dr2)
            dr3, di3, dr4, di4 = f(dr3 + dr4), f(di3 + di4), f(di3 - di4), f(dr4 - dr3)
            ar, ai = cc(i - 1, k, 0), cc(i, k, 0)
            out[at(i - 1, 0, k)] = f(f(ar + dr2) + dr3)
            out[at(i, 0, k)] = f(f(ai + di2) + di3)
            tr2 = f(f(ar + f(tr11 * dr2)) + f(tr12 * dr3))
            ti2 = f(f(ai + f(tr11 * di2)) + f(tr12 * di3))
            tr3 = f(f(ar + f(tr12 * dr2)) + f(tr11 * dr3))
            ti3 = f(f(ai + f(tr12 * di2)) + f(tr11 * di3))
            tr5, ti5 = f(f(ti11 * dr5) + f(ti12 * dr4)), f(f(ti11 * di5) + f(ti12 * di4))
            tr4, ti4 = f(f(ti12 * dr5) - f(ti11 * dr4)), f(f(ti12 * di5) - f(ti11 * di4))
            out[at(i - 1, 2, k)], out[at(ic - 1, 1, k)] = _sum_diff(tr2, tr5)
            out[at(i, 2, k)], out[at(ic, 1, k)] = _sum_diff(ti5, ti2)
            out[at(i - 1, 4, k)], out[at(ic - 1, 3, k)] = _sum_diff(tr3, tr4)
            out[at(i, 4, k)], out[at(ic, 3, k)] = _sum_diff(ti4, ti3)
    return out


def _prime_rows(c, p, l, half, weights):
    """The two sums of a generic real step for output pair l, p - l: over the
    blocks ``c[j]`` (lists of reals), ``c[0] + cos(l) c[1] + cos(2l) c[2]``
    and ``sin(l) c[p-1] + sin(2l) c[p-2]``, then the rest of the terms four,
    two, then one at a time (each group summed, then added), as pocketfft's
    ``radfg`` and ``radbg`` do. ``weights[j]`` is (cos, sin) of 2 pi j / p."""
    f = _f32
    (ar1, ai1), (ar2, ai2) = weights[l], weights[2 * l]
    cos_sum = [f(f(a + f(ar1 * b)) + f(ar2 * d)) for a, b, d in zip(c[0], c[1], c[2])]
    sin_sum = [f(f(ai1 * a) + f(ai2 * b)) for a, b in zip(c[p - 1], c[p - 2])]
    angle, j = 2 * l, 3
    for group in (4, 2, 1):
        while j < half - (group - 1):
            ws = []
            for _ in range(group):
                angle = (angle + l) % p
                ws.append(weights[angle])
            for ik in range(len(cos_sum)):
                a = f(ws[0][0] * c[j][ik])
                b = f(ws[0][1] * c[p - j][ik])
                for g in range(1, group):
                    a = f(a + f(ws[g][0] * c[j + g][ik]))
                    b = f(b + f(ws[g][1] * c[p - j - g][ik]))
                cos_sum[ik] = f(cos_sum[ik] + a)
                sin_sum[ik] = f(sin_sum[ik] + b)
            j += group
    return cos_sum, sin_sum


def _prime_weights(p, table):
    """(cos, sin) of 2 pi j / p for j < p, from the length's roots."""
    n = len(table)
    return [(table[j * (n // p)].real, table[j * (n // p)].imag) for j in range(p)]


def _forward_prime(x, p, l1, ido, table):
    """The forward real step of a prime radix p > 5 (pocketfft's ``radfg``)."""
    f = _f32
    half, size = (p + 1) // 2, l1 * ido
    c = list(x)

    def c1(a, k, j):
        return a + ido * (k + l1 * j)

    if ido > 1:  # turn each point by its root, and pair input j with input p - j
        for j in range(1, half):
            jc = p - j
            for k in range(l1):
                for i in range(1, ido - 1, 2):
                    m = (i + 1) // 2
                    w, wc = table[j * l1 * m], table[jc * l1 * m]
                    t1, t2 = c[c1(i, k, j)], c[c1(i + 1, k, j)]
                    t3, t4 = c[c1(i, k, jc)], c[c1(i + 1, k, jc)]
                    x1 = f(f(w.real * t1) + f(w.imag * t2))
                    x2 = f(f(w.real * t2) - f(w.imag * t1))
                    x3 = f(f(wc.real * t3) + f(wc.imag * t4))
                    x4 = f(f(wc.real * t4) - f(wc.imag * t3))
                    c[c1(i, k, j)], c[c1(i + 1, k, jc)] = _sum_diff(x3, x1)
                    c[c1(i + 1, k, j)], c[c1(i, k, jc)] = _sum_diff(x2, x4)
    for j in range(1, half):
        jc = p - j
        for k in range(l1):
            a, b = c[c1(0, k, jc)], c[c1(0, k, j)]
            c[c1(0, k, jc)], c[c1(0, k, j)] = f(a - b), f(a + b)
    blocks = [c[j * size:(j + 1) * size] for j in range(p)]
    weights = _prime_weights(p, table)
    ch = [None] * p
    for l in range(1, half):
        ch[l], ch[p - l] = _prime_rows(blocks, p, l, half, weights)
    total = list(blocks[0])
    for j in range(1, half):
        total = [f(a + b) for a, b in zip(total, blocks[j])]
    ch[0] = total

    def chv(a, k, j):
        return ch[j][a + ido * k]

    out = [0.0] * len(x)

    def at(a, j, k):
        return a + ido * (j + p * k)

    for k in range(l1):
        for i in range(ido):
            out[at(i, 0, k)] = chv(i, k, 0)
    for j in range(1, half):
        jc, j2 = p - j, 2 * j - 1
        for k in range(l1):
            out[at(ido - 1, j2, k)] = chv(0, k, j)
            out[at(0, j2 + 1, k)] = chv(0, k, jc)
            for i in range(1, ido - 1, 2):
                ic = ido - i - 2
                out[at(i, j2 + 1, k)] = f(chv(i, k, j) + chv(i, k, jc))
                out[at(ic, j2, k)] = f(chv(i, k, j) - chv(i, k, jc))
                out[at(i + 1, j2 + 1, k)] = f(chv(i + 1, k, j) + chv(i + 1, k, jc))
                out[at(ic + 1, j2, k)] = f(chv(i + 1, k, jc) - chv(i + 1, k, j))
    return out


def _times(wr, wi, re, im):
    """``w * z`` as (real, imaginary), each product rounded, then each sum."""
    f = _f32
    return f(f(wr * re) - f(wi * im)), f(f(wr * im) + f(wi * re))


def _backward2(x, l1, ido, table):
    """A backward real step of radix 2 (``radb2``)."""
    f = _f32
    out = [0.0] * len(x)

    def cc(a, j, k):
        return x[a + ido * (j + 2 * k)]

    def at(a, k, j):
        return a + ido * (k + l1 * j)

    for k in range(l1):
        out[at(0, k, 0)], out[at(0, k, 1)] = _sum_diff(cc(0, 0, k), cc(ido - 1, 1, k))
        if ido % 2 == 0:
            out[at(ido - 1, k, 0)] = f(2 * cc(ido - 1, 0, k))
            out[at(ido - 1, k, 1)] = f(-2 * cc(0, 1, k))
        for i in range(2, ido, 2):
            ic, w = ido - i, table[l1 * (i // 2)]
            out[at(i - 1, k, 0)], tr2 = _sum_diff(cc(i - 1, 0, k), cc(ic - 1, 1, k))
            ti2, out[at(i, k, 0)] = _sum_diff(cc(i, 0, k), cc(ic, 1, k))
            out[at(i - 1, k, 1)], out[at(i, k, 1)] = _times(w.real, w.imag, tr2, ti2)
    return out


def _backward3(x, l1, ido, table):
    """A backward real step of radix 3 (``radb3``)."""
    f = _f32
    taur, taui = -0.5, _constant(math.sin, 1, 3)
    out = [0.0] * len(x)

    def cc(a, j, k):
        return x[a + ido * (j + 3 * k)]

    def at(a, k, j):
        return a + ido * (k + l1 * j)

    for k in range(l1):
        tr2 = f(2 * cc(ido - 1, 1, k))
        cr2 = f(cc(0, 0, k) + f(taur * tr2))
        out[at(0, k, 0)] = f(cc(0, 0, k) + tr2)
        ci3 = f(2 * taui * cc(0, 2, k))
        out[at(0, k, 2)], out[at(0, k, 1)] = _sum_diff(cr2, ci3)
        for i in range(2, ido, 2):
            ic, m = ido - i, i // 2
            w2, w3 = table[l1 * m], table[2 * l1 * m]
            tr2 = f(cc(i - 1, 2, k) + cc(ic - 1, 1, k))
            ti2 = f(cc(i, 2, k) - cc(ic, 1, k))
            cr2 = f(cc(i - 1, 0, k) + f(taur * tr2))
            ci2 = f(cc(i, 0, k) + f(taur * ti2))
            out[at(i - 1, k, 0)] = f(cc(i - 1, 0, k) + tr2)
            out[at(i, k, 0)] = f(cc(i, 0, k) + ti2)
            cr3 = f(taui * f(cc(i - 1, 2, k) - cc(ic - 1, 1, k)))
            ci3 = f(taui * f(cc(i, 2, k) + cc(ic, 1, k)))
            dr3, dr2 = _sum_diff(cr2, ci3)
            di2, di3 = _sum_diff(ci2, cr3)
            out[at(i - 1, k, 1)], out[at(i, k, 1)] = _times(w2.real, w2.imag, dr2, di2)
            out[at(i - 1, k, 2)], out[at(i, k, 2)] = _times(w3.real, w3.imag, dr3, di3)
    return out


def _backward4(x, l1, ido, table):
    """A backward real step of radix 4 (``radb4``)."""
    f, s = _f32, _SQRT2
    out = [0.0] * len(x)

    def cc(a, j, k):
        return x[a + ido * (j + 4 * k)]

    def at(a, k, j):
        return a + ido * (k + l1 * j)

    for k in range(l1):
        tr2, tr1 = _sum_diff(cc(0, 0, k), cc(ido - 1, 3, k))
        tr3, tr4 = f(2 * cc(ido - 1, 1, k)), f(2 * cc(0, 2, k))
        out[at(0, k, 0)], out[at(0, k, 2)] = _sum_diff(tr2, tr3)
        out[at(0, k, 3)], out[at(0, k, 1)] = _sum_diff(tr1, tr4)
        if ido % 2 == 0:
            e = ido - 1
            ti1, ti2 = _sum_diff(cc(0, 3, k), cc(0, 1, k))
            tr2, tr1 = _sum_diff(cc(e, 0, k), cc(e, 2, k))
            out[at(e, k, 0)] = f(tr2 + tr2)
            out[at(e, k, 1)] = f(s * f(tr1 - ti1))
            out[at(e, k, 2)] = f(ti2 + ti2)
            out[at(e, k, 3)] = f(-s * f(tr1 + ti1))
        for i in range(2, ido, 2):
            ic, m = ido - i, i // 2
            tr2, tr1 = _sum_diff(cc(i - 1, 0, k), cc(ic - 1, 3, k))
            ti1, ti2 = _sum_diff(cc(i, 0, k), cc(ic, 3, k))
            tr4, ti3 = _sum_diff(cc(i, 2, k), cc(ic, 1, k))
            tr3, ti4 = _sum_diff(cc(i - 1, 2, k), cc(ic - 1, 1, k))
            out[at(i - 1, k, 0)], cr3 = _sum_diff(tr2, tr3)
            out[at(i, k, 0)], ci3 = _sum_diff(ti2, ti3)
            cr4, cr2 = _sum_diff(tr1, tr4)
            ci2, ci4 = _sum_diff(ti1, ti4)
            for j, (cr, ci) in enumerate(((cr2, ci2), (cr3, ci3), (cr4, ci4)), 1):
                w = table[j * l1 * m]
                out[at(i - 1, k, j)], out[at(i, k, j)] = _times(w.real, w.imag, cr, ci)
    return out


def _backward5(x, l1, ido, table):
    """A backward real step of radix 5 (``radb5``)."""
    f = _f32
    tr11, ti11, tr12, ti12 = _five_constants()
    out = [0.0] * len(x)

    def cc(a, j, k):
        return x[a + ido * (j + 5 * k)]

    def at(a, k, j):
        return a + ido * (k + l1 * j)

    for k in range(l1):
        ti5, ti4 = f(cc(0, 2, k) + cc(0, 2, k)), f(cc(0, 4, k) + cc(0, 4, k))
        tr2 = f(cc(ido - 1, 1, k) + cc(ido - 1, 1, k))
        tr3 = f(cc(ido - 1, 3, k) + cc(ido - 1, 3, k))
        c0 = cc(0, 0, k)
        out[at(0, k, 0)] = f(f(c0 + tr2) + tr3)
        cr2 = f(f(c0 + f(tr11 * tr2)) + f(tr12 * tr3))
        cr3 = f(f(c0 + f(tr12 * tr2)) + f(tr11 * tr3))
        ci5, ci4 = f(f(ti5 * ti11) + f(ti4 * ti12)), f(f(ti5 * ti12) - f(ti4 * ti11))
        out[at(0, k, 4)], out[at(0, k, 1)] = _sum_diff(cr2, ci5)
        out[at(0, k, 3)], out[at(0, k, 2)] = _sum_diff(cr3, ci4)
        for i in range(2, ido, 2):
            ic, m = ido - i, i // 2
            tr2, tr5 = _sum_diff(cc(i - 1, 2, k), cc(ic - 1, 1, k))
            ti5, ti2 = _sum_diff(cc(i, 2, k), cc(ic, 1, k))
            tr3, tr4 = _sum_diff(cc(i - 1, 4, k), cc(ic - 1, 3, k))
            ti4, ti3 = _sum_diff(cc(i, 4, k), cc(ic, 3, k))
            ar, ai = cc(i - 1, 0, k), cc(i, 0, k)
            out[at(i - 1, k, 0)] = f(f(ar + tr2) + tr3)
            out[at(i, k, 0)] = f(f(ai + ti2) + ti3)
            cr2 = f(f(ar + f(tr11 * tr2)) + f(tr12 * tr3))
            ci2 = f(f(ai + f(tr11 * ti2)) + f(tr12 * ti3))
            cr3 = f(f(ar + f(tr12 * tr2)) + f(tr11 * tr3))
            ci3 = f(f(ai + f(tr12 * ti2)) + f(tr11 * ti3))
            cr5, cr4 = f(f(tr5 * ti11) + f(tr4 * ti12)), f(f(tr5 * ti12) - f(tr4 * ti11))
            ci5, ci4 = f(f(ti5 * ti11) + f(ti4 * ti12)), f(f(ti5 * ti12) - f(ti4 * ti11))
            dr4, dr3 = _sum_diff(cr3, ci4)
            di3, di4 = _sum_diff(ci3, cr4)
            dr5, dr2 = _sum_diff(cr2, ci5)
            di2, di5 = _sum_diff(ci2, cr5)
            for j, (dr, di) in enumerate(((dr2, di2), (dr3, di3), (dr4, di4), (dr5, di5)), 1):
                w = table[j * l1 * m]
                out[at(i - 1, k, j)], out[at(i, k, j)] = _times(w.real, w.imag, dr, di)
    return out


def _backward_prime(x, p, l1, ido, table):
    """The backward real step of a prime radix p > 5 (pocketfft's ``radbg``)."""
    f = _f32
    half, size = (p + 1) // 2, l1 * ido

    def cc(a, j, k):
        return x[a + ido * (j + p * k)]

    ch = [[0.0] * size for _ in range(p)]  # ch[j][a + ido * k]
    for k in range(l1):
        for i in range(ido):
            ch[0][i + ido * k] = cc(i, 0, k)
    for j in range(1, half):
        jc, j2 = p - j, 2 * j - 1
        for k in range(l1):
            ch[j][ido * k] = f(2 * cc(ido - 1, j2, k))
            ch[jc][ido * k] = f(2 * cc(0, j2 + 1, k))
            for i in range(1, ido - 1, 2):
                ic = ido - i - 2
                ch[j][i + ido * k] = f(cc(i, j2 + 1, k) + cc(ic, j2, k))
                ch[jc][i + ido * k] = f(cc(i, j2 + 1, k) - cc(ic, j2, k))
                ch[j][i + 1 + ido * k] = f(cc(i + 1, j2 + 1, k) - cc(ic + 1, j2, k))
                ch[jc][i + 1 + ido * k] = f(cc(i + 1, j2 + 1, k) + cc(ic + 1, j2, k))
    weights = _prime_weights(p, table)
    c = [None] * p
    for l in range(1, half):
        c[l], c[p - l] = _prime_rows(ch, p, l, half, weights)
    for j in range(1, half):
        ch[0] = [f(a + b) for a, b in zip(ch[0], ch[j])]
    for j in range(1, half):
        jc = p - j
        for k in range(l1):
            a, b = c[j][ido * k], c[jc][ido * k]
            ch[jc][ido * k], ch[j][ido * k] = _sum_diff(a, b)
            for i in range(1, ido - 1, 2):
                r, r1 = c[j][i + ido * k], c[j][i + 1 + ido * k]
                s, s1 = c[jc][i + ido * k], c[jc][i + 1 + ido * k]
                ch[j][i + ido * k], ch[jc][i + ido * k] = f(r - s1), f(r + s1)
                ch[j][i + 1 + ido * k], ch[jc][i + 1 + ido * k] = _sum_diff(r1, s)
    for j in range(1, p):
        for k in range(l1):
            for i in range(1, ido - 1, 2):
                w = table[j * l1 * ((i + 1) // 2)]
                t1, t2 = ch[j][i + ido * k], ch[j][i + 1 + ido * k]
                ch[j][i + ido * k] = f(f(w.real * t1) - f(w.imag * t2))
                ch[j][i + 1 + ido * k] = f(f(w.real * t2) + f(w.imag * t1))
    return [v for block in ch for v in block]


_FORWARD = {2: _forward2, 3: _forward3, 4: _forward4, 5: _forward5}
_BACKWARD = {2: _backward2, 3: _backward3, 4: _backward4, 5: _backward5}


def _real_plan(x, forward, scale):
    """The FFTPACK transform of the real line ``x`` (``rfftp``): forward, the
    reals to their halfcomplex spectrum ``[r0, r1, i1, ...]`` (the steps in
    reverse factor order); backward, such a spectrum to reals."""
    n = len(x)
    if n == 1:
        return [_f32(x[0] * scale)]
    table, factors = roots(n), real_factors(n)
    steps = range(len(factors) - 1, -1, -1) if forward else range(len(factors))
    for index in steps:
        p = factors[index]
        l1 = math.prod(factors[:index])
        ido = n // (l1 * p)
        radix = (_FORWARD if forward else _BACKWARD).get(p)
        if radix is not None:
            x = radix(x, l1, ido, table)
        else:
            x = (_forward_prime if forward else _backward_prime)(x, p, l1, ido, table)
    return [_f32(scale * v) for v in x] if scale != 1.0 else x


# --- long lines with a large prime factor: Bluestein ---------------------------------------


def _cost_guess(n):
    """pocketfft's estimate of the work of a plan of length n: n times the
    sum of its prime factors, those over 5 counted 1.1 times."""
    result, m = 0.0, n
    while m % 2 == 0:
        result += 2
        m //= 2
    for p in _odd_prime_factors(m):
        result += p if p <= 5 else 1.1 * p
    return result * n


def good_size(n):
    """The smallest product of 2, 3, 5, 7 and 11 that is at least n (n itself up to 12)."""
    if n <= 12:
        return n
    best = 2 * n
    f11 = 1
    while f11 < best:
        f7 = f11
        while f7 < best:
            f5 = f7
            while f5 < best:
                x = f5
                while x < n:
                    x *= 2
                while True:  # walk x down by halves and up by thirds, keeping the best
                    if x < n:
                        x *= 3
                    elif x > n:
                        best = min(best, x)
                        if x % 2:
                            break
                        x //= 2
                    else:
                        return n
                f5 *= 5
            f7 *= 7
        f11 *= 11
    return best


def uses_bluestein(n, real):
    """Whether pocketfft transforms a line of length n by Bluestein's
    convolution: n is at least 50, its largest prime factor p has p^2 > n,
    and 1.5 times the cost of two transforms of ``good_size(2n - 1)`` is
    below the cost of n's own plan (half that for a real plan)."""
    if n < 50:
        return False
    largest = max([2] + _odd_prime_factors(n)) if n % 2 else max(_odd_prime_factors(n) or [2])
    if largest * largest <= n:
        return False
    own = (0.5 if real else 1.0) * _cost_guess(n)
    return 1.5 * (2 * _cost_guess(good_size(2 * n - 1))) < own


@functools.lru_cache(maxsize=8)
def _chirp(n):
    """What Bluestein's method needs for length n (``fftblue``'s constructor):
    the chirp ``b_m = exp(pi i m^2 / n)`` (roots of unity of order 2n), the
    length ``n2`` of the convolution, and the first ``n2 / 2 + 1`` points of
    the transform of the chirp wrapped around n2 and divided by n2."""
    n2 = good_size(2 * n - 1)
    table = roots(2 * n)
    chirp = [table[m * m % (2 * n)] for m in range(n)]
    inverse_n2 = _f32(1.0 / n2)
    padded = [0j] * n2
    padded[0] = _scale(chirp[0], inverse_n2)
    for m in range(1, n):
        padded[m] = padded[n2 - m] = _scale(chirp[m], inverse_n2)
    return chirp, n2, _complex_plan(padded, True, 1.0)[: n2 // 2 + 1]


def _bluestein(x, forward, scale):
    """The transform of a complex line by a convolution (``fftblue::fft``):
    ``X_k = conj(b_k) sum_j (x_j conj(b_j)) b_{k-j}`` going forward (the
    conjugates swap going back), the convolution done by transforms of n2 points."""
    n = len(x)
    chirp, n2, chirp_hat = _chirp(n)
    a = [_times_root(v, b, forward) for v, b in zip(x, chirp)]
    zero = _scale(a[0], 0.0)  # +-0, or nan where a[0] is not finite, as pocketfft pads
    a_hat = _complex_plan(a + [zero] * (n2 - n), True, 1.0)
    spectrum = list(a_hat)
    for m in range(n2 // 2 + 1):
        spectrum[m] = _times_root(a_hat[m], chirp_hat[m], not forward)
        if 0 < m < n2 - m:
            spectrum[n2 - m] = _times_root(a_hat[n2 - m], chirp_hat[m], not forward)
    conv = _complex_plan(spectrum, False, 1.0)
    return [_scale(_times_root(conv[m], chirp[m], forward), scale) for m in range(n)]


def _bluestein_real(x, forward, scale):
    """A real line by the complex Bluestein transform (``fftblue::exec_r``):
    forward, the reals in, the halfcomplex spectrum out; backward, the other way."""
    n = len(x)
    if forward:
        zero = _f32(0.0 * x[0])
        spectrum = _bluestein([complex(v, zero) for v in x], True, scale)
        parts = [part for v in spectrum[1:] for part in (v.real, v.imag)]
        return [spectrum[0].real] + parts[: n - 1]
    full = [complex(x[0], _f32(x[0] * 0.0))]
    for m in range(1, (n + 1) // 2):
        full.append(complex(x[2 * m - 1], x[2 * m]))
    if n % 2 == 0:
        full.append(complex(x[n - 1], _f32(0.0 * x[0])))
    full += [v.conjugate() for v in full[1:(n + 1) // 2][::-1]]
    return [v.real for v in _bluestein(full, False, scale)]


# --- what the kernel calls -------------------------------------------------------------------


def complex_line(x, forward, scale=1.0):
    """The DFT of a line of complex64 numbers (``pocketfft_c::exec``): forward
    with ``exp(-2 pi i jk / n)``, else backward, unnormalized; the result
    times the float32 ``scale``."""
    if uses_bluestein(len(x), False):
        return _bluestein(list(x), forward, scale)
    return _complex_plan(list(x), forward, scale)


def real_line(x, forward, scale=1.0):
    """pocketfft_r::exec: forward, float32 reals to their halfcomplex
    spectrum ``[r0, r1, i1, r2, i2, ...]`` (n numbers); backward, such a
    spectrum to n reals; times the float32 ``scale``."""
    if uses_bluestein(len(x), True):
        return _bluestein_real(list(x), forward, scale)
    return _real_plan(list(x), forward, scale)
