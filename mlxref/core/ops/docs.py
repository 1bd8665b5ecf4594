"""The sentences many ops' docstrings share, each written once.

An op's docstring keeps what is its own: what it computes, its edge cases,
its example. What several ops say alike (how operands broadcast, what an
``axis`` accepts, the errors of a family, whole argument lists) is a piece
here, named in the docstring by a placeholder in braces; ``@shared_doc``
fills it when the op's module is imported, so ``help(mx.add)``,
``inspect.getdoc`` and the manual read the whole text::

    @shared_doc
    def add(a, b, /, *, stream=None):
        '''``mx.add``: ``a + b``, elementwise.

        Arguments:
        - ``a``, ``b``: {operands}

        Errors: ``ValueError`` {binary_errors}.
        ...

- A piece is a phrase (``{operands}`` after the item's name) or whole list
  items (``{reduce_arguments}`` alone on its line: ``a``, ``axis``,
  ``keepdims``).
- ``{name}`` in a piece becomes the op's name, as its error messages have it
  ("[bitwise_and] Only allowed on ...").
- An op that takes ``stream`` gets the line saying what it does (``STREAM``)
  as the last of its arguments; its docstring does not repeat it.
- A filled paragraph or list item is wrapped again to 84 columns, never
  inside a ``code`` span, and no line but its first starts as Markdown
  markup would (a list, a heading).
- A placeholder that names no piece, or stands on the first line or in an
  example, raises ``ValueError`` when the op's module is imported.

Read next: tests/manual/test_op_examples.py (every docstring filled, every
piece used and where it belongs).
"""

import inspect
import re
import textwrap

# --- every op ----------------------------------------------------------------------

STREAM = "accepted; changes nothing (mlxref has one CPU device)."
NOT_AN_ARRAY = ('for a list or a string (MLX: "Invalid type list received in array '
                'initialization.")')
BROADCAST = ('when the shapes do not broadcast (MLX: "[broadcast_shapes] Shapes (3) and '
             '(2) cannot be broadcast.")')
OVERFLOW = ("when a Python int does not fit the array's integer dtype (MLX: \"Converting "
            "-1 to uint8 would result in overflow.\")")
NO_COMPLEX = 'for complex64 (MLX: "[{name}] Not supported for complex64.")'

# --- elementwise -------------------------------------------------------------------

FLOAT_OPERAND = ("an array or a Python scalar. Integers and bools are computed in float32; "
                 "float16, bfloat16, float32, float64 and complex64 keep their dtype.")
REAL_FLOAT_OPERAND = ("an array or a Python scalar. Integers and bools are computed in "
                      "float32; float16, bfloat16, float32 and float64 keep their dtype.")
SAME_DTYPE_OPERAND = "an array or a Python scalar; the result has its dtype."
INTEGRAL_OPERAND = ("an array or a Python scalar. Integer and bool arrays are returned as they "
                    "are (a new handle, no node); float dtypes are kept.")
OPERANDS = ("arrays or Python scalars, broadcast together. A Python scalar takes the other "
            "operand's dtype when it fits (``int32 array + 2`` is int32, ``int32 array + "
            "2.5`` is float32); two arrays promote to a common dtype.")
BINARY_ERRORS = f"{BROADCAST}, {OVERFLOW}, and {NOT_AN_ARRAY}"
LOGICAL_OPERANDS = ("arrays or Python scalars of any dtype, broadcast together; each is cast "
                    "to bool (nonzero is True) on its own, so they are not promoted.")
BITWISE_OPERANDS = ("integer or bool arrays or Python scalars, broadcast together and "
                    "promoted to one dtype (a Python int takes the array's dtype).")
BITWISE_ERRORS = ('``RuntimeError`` when the promoted dtype is not an integer or bool (MLX: '
                  '"[{name}] Only allowed on integer or boolean types but got types float32 '
                  f'and float32."); ``ValueError`` {BROADCAST}, {OVERFLOW}, or {NOT_AN_ARRAY}')
SHIFT_COUNT = ("A shift count that is negative, or at least the width C shifts at (32 bits for "
               "the types up to 32 bits, 64 for int64 and uint64), raises ``ValueError`` when "
               "evaluated: C++ leaves such a shift undefined, and MLX's CPU build gives results "
               "that depend on the arrays' layout.")
PROMOTED = "The operands are compared in their promoted dtype."
ORDERING = ("A comparison with nan is False; complex numbers order by real part, then "
            "imaginary part.")

CLOSE_ARGUMENTS = ("- ``a``, ``b``: arrays (MLX takes no Python scalar here).\n"
                   "- ``rtol``: the relative tolerance, a float (default 1e-05).\n"
                   "- ``atol``: the absolute tolerance, a float (default 1e-08).\n"
                   "- ``equal_nan``: a bool (default False); True makes two nans close.")
CLOSE_ERRORS = ("``TypeError`` when ``a`` or ``b`` is not an array, a tolerance not a number "
                'or ``equal_nan`` not a bool (MLX: "{name}(): incompatible function '
                f'arguments. ..."); ``ValueError`` {BROADCAST}')

# --- reductions, scans, sorts --------------------------------------------------------

AXES = "an int, a sequence of ints, or None for every axis (default: None)."
KEEPDIMS = "keep the reduced axes with size 1 (default: False)."
FLAT_AXIS = "one int, or None for the flattened array (default: None)."
SORT_AXIS = "one int, or None for the flattened array (default: -1, the last)."
REDUCE_ARGUMENTS = f"- ``a``: the array.\n- ``axis``: {AXES}\n- ``keepdims``: {KEEPDIMS}"
ARG_REDUCE_ARGUMENTS = ("- ``a``: a non-empty array.\n"
                        f"- ``axis``: {FLAT_AXIS}\n"
                        "- ``keepdims``: keep the reduced axis with size 1 (default: False).")
ARG_REDUCE_ERRORS = ('``ValueError`` for an empty array (MLX: "[{name}] Cannot {name} reduce '
                     'zero size array."); ``IndexError`` for an axis out of range (MLX: '
                     '"Invalid axis 1 for array with 1 dimensions."); ``TypeError`` for a '
                     'sequence of axes')
REDUCE_DTYPE = ("bools and the integers up to 32 bits give int32 (uint32 for the unsigned "
                "ones); other dtypes keep theirs")
DUPLICATE_AXES = ('``ValueError`` for an axis named twice (MLX: "Duplicate axes detected in '
                  'reduction.")')
REDUCE_AXIS_ERRORS = ('``IndexError`` for an axis out of range (MLX: "Invalid axis 1 for array '
                      f'with 1 dimensions."); {DUPLICATE_AXES}')
EMPTY_AXIS_ERROR = ('``ValueError`` over an axis of size 0 (MLX: "[{name}] Cannot {name} reduce '
                    'over axis 0 with size 0.")')
MEAN_AXIS_ERRORS = ('``IndexError`` for an axis out of range (MLX: "[mean] axis 2 is out of '
                    f'bounds for array with 1 dimensions."); {DUPLICATE_AXES}')
REVERSE = "scan from the last element to the first (default: False)."
INCLUSIVE = "include element ``i`` in output ``i`` (default: True)."
SCAN_ARGUMENTS = f"- ``axis``: {FLAT_AXIS}\n- ``reverse``: {REVERSE}\n- ``inclusive``: {INCLUSIVE}"
AXIS_BOUNDS_ERROR = ('``IndexError`` for an axis out of range (MLX: "[{name}] Axis 1 is out of '
                   'bounds for array with 1 dimensions.")')

# --- fft -----------------------------------------------------------------------------

NORM = ('"backward" (the default), "ortho" or "forward": where the ``1/n`` scale goes (as '
        '``fft`` and ``ifft`` say), ``n`` counting every point transformed.')
FFT_AXIS_NORM = f"- ``axis``: the axis transformed (default -1).\n- ``norm``: {NORM}"
FFT_ARGUMENTS = ("- ``a``: the input array (at least 1-D).\n"
                 "- ``n``: the number of input points (default: the size of ``axis``).\n"
                 + FFT_AXIS_NORM)
_CROP = "- ``s``: the sizes to crop or zero-pad each of ``axes`` to (default: their own)."
_OUT = "- ``s``: the output sizes along ``axes`` (default: their own, ``2 (m - 1)`` for the last)."
_TWO = f"- ``axes``: the two axes transformed (default ``[-2, -1]``).\n- ``norm``: {NORM}"
_ALL = f"- ``axes``: the axes transformed (default None: every axis).\n- ``norm``: {NORM}"
FFT2_ARGUMENTS = f"{_CROP}\n{_TWO}"
FFTN_ARGUMENTS = f"{_CROP}\n{_ALL}"
IRFFT2_ARGUMENTS = f"{_OUT}\n{_TWO}"
IRFFTN_ARGUMENTS = f"{_OUT}\n{_ALL}"
_NORM_ERROR = ('another ``norm`` (MLX: "[{name}] Invalid norm. Expected one of {\'backward\', '
               '\'ortho\', \'forward\'}.")')
_FFT_AXIS_ERROR = ('``IndexError`` for an axis out of range (mlxref: "[{name}] Invalid axis 1 '
                   'for array with 1 dimensions."; MLX: "SmallVector out of range.")')
FFT_ERRORS = (f'``ValueError`` for {_NORM_ERROR} or ``n`` below 1 (MLX: "[fftn] Invalid FFT '
              f'output size requested (0)"); {_FFT_AXIS_ERROR}')
FFTN_ERRORS = (f'``ValueError`` for {_NORM_ERROR}, ``s`` without ``axes`` (MLX: "[{{name}}] '
               '`axes` should not be `None` if `s` is not `None`."), ``s`` and ``axes`` of '
               'different lengths (MLX: "[fftn] Shape and axes have different sizes."), a '
               'repeated axis (MLX: "[fftn] Duplicated axis received (0,0)") or a size below 1 '
               f'(MLX: "[fftn] Invalid FFT output size requested (0,2)"); {_FFT_AXIS_ERROR}')
SHIFT_ARGUMENTS = ("- ``a``: the array.\n"
                   "- ``axes``: an int or a list of ints (default None: every axis).")
SHIFT_ERROR = ('``IndexError`` for an axis out of range (MLX: "[{name}] Invalid axis 2 for array '
               'with 1 dimensions.")')
FREQ_ARGUMENTS = ("- ``n``: the number of points, an int.\n"
                  "- ``d``: the sample spacing, a float (default 1.0).")
FREQ_ERRORS = ('``ValueError`` when ``n`` is below 1 (MLX: "[{name}] `n` must be greater than '
               '0.") or ``d`` is 0 (MLX: "[{name}] `d` must be non-zero.")')

# --- creation, shapes ------------------------------------------------------------------

FLOAT32_DTYPE = "the element type (default: float32)."
NEGATIVE_DIMS = 'for a negative dimension (MLX: "[full] Negative dimensions not allowed.")'
FILL_ARGUMENTS = ("- ``shape``: an int or a sequence of ints (``()`` for a 0-d array).\n"
                  f"- ``dtype``: {FLOAT32_DTYPE}")
FILL_ERRORS = (f"``ValueError`` {NEGATIVE_DIMS}; ``TypeError`` when ``dtype`` is not a Dtype "
               '(MLX: "{name}(): incompatible function arguments. ...")')
LIKE_A = "the array whose shape (and dtype) is used; its values are not read."
LIKE_DTYPE = "the element type (default: ``a.dtype``)."
LIKE_ERRORS = ('``TypeError`` when ``a`` is not an array, a list included (MLX: "{name}(): '
               'incompatible function arguments. ...")')
DIAGONALS = "0 the main one, positive above it, negative below (default: 0)."
ATLEAST_RESULT = "One array in gives one array out; several (or none) give a list."
ATLEAST_ARYS = "- ``arys``: the arrays (Python scalars are not converted)."
ATLEAST_ERRORS = ('``RuntimeError`` naming a value that is not an array (MLX\'s says only '
                  '"std::bad_cast")')

# --- mx.linalg -------------------------------------------------------------------------

FLOAT_MATRICES = "- ``a``: float32 or float64, at least two dimensions."
FLOAT_MATRICES_ERRORS = ('``ValueError`` for another dtype, complex64 included (MLX: '
                         '"[linalg::{name}] Arrays must have type float32 or float64. Received '
                         'array with type int32.") or fewer than two dimensions (MLX: '
                         '"[linalg::{name}] Arrays must have >= 2 dimensions. Received array '
                         'with 1 dimensions.")')
SQUARE_MATRICES = "- ``a``: float32, float64 or complex64 square matrices in the last two axes."
EIG_ERRORS = ('``ValueError`` for another dtype (MLX: "[linalg::{name}] Arrays must have type '
              'float32, float64 or complex64. Received array with type int32."), fewer than '
              'two dimensions (MLX: "[linalg::{name}] Arrays must have >= 2 dimensions. '
              'Received array with 1 dimensions.") or matrices that are not square (MLX: '
              '"[linalg::{name}] Only defined for square matrices.")')

# --- mx.fast ---------------------------------------------------------------------------

KERNEL_ARGUMENTS = ("- ``name``: the kernel's name.\n"
                    "- ``input_names``, ``output_names``: the names the source uses for the "
                    "arrays.\n"
                    "- ``source``: the body of the kernel.\n"
                    '- ``header``: code put before the kernel (default "").\n'
                    "- ``ensure_row_contiguous``: copy inputs to row-major first (default True).")

# --- quantization, mx.random ------------------------------------------------------------

QUANT_MODE = '"affine", "mxfp4", "mxfp8" or "nvfp4" (default "affine").'
KEY = "the key (default None: the next key of the global sequence)."
RANDOM_SHAPE = "the output shape (default ``()``)."

# --- window functions ------------------------------------------------------------------

WINDOW_ARGUMENTS = ("- ``M``: the number of points, an int: ``M < 1`` gives an empty float32 "
                    "array, ``M == 1`` the single value 1.")
WINDOW_ERRORS = ('``TypeError`` when ``M`` is not an int (MLX\'s "incompatible function '
                 'arguments" message, with the signature)')

PIECES = {
    "not_an_array": NOT_AN_ARRAY,
    "broadcast": BROADCAST,
    "no_complex": NO_COMPLEX,
    "float_operand": FLOAT_OPERAND,
    "real_float_operand": REAL_FLOAT_OPERAND,
    "same_dtype_operand": SAME_DTYPE_OPERAND,
    "integral_operand": INTEGRAL_OPERAND,
    "operands": OPERANDS,
    "binary_errors": BINARY_ERRORS,
    "logical_operands": LOGICAL_OPERANDS,
    "bitwise_operands": BITWISE_OPERANDS,
    "bitwise_errors": BITWISE_ERRORS,
    "shift_count": SHIFT_COUNT,
    "promoted": PROMOTED,
    "ordering": ORDERING,
    "close_arguments": CLOSE_ARGUMENTS,
    "close_errors": CLOSE_ERRORS,
    "axes": AXES,
    "keepdims": KEEPDIMS,
    "flat_axis": FLAT_AXIS,
    "sort_axis": SORT_AXIS,
    "reduce_arguments": REDUCE_ARGUMENTS,
    "arg_reduce_arguments": ARG_REDUCE_ARGUMENTS,
    "arg_reduce_errors": ARG_REDUCE_ERRORS,
    "reduce_dtype": REDUCE_DTYPE,
    "empty_axis_error": EMPTY_AXIS_ERROR,
    "reduce_axis_errors": REDUCE_AXIS_ERRORS,
    "mean_axis_errors": MEAN_AXIS_ERRORS,
    "scan_arguments": SCAN_ARGUMENTS,
    "axis_bounds_error": AXIS_BOUNDS_ERROR,
    "fft_arguments": FFT_ARGUMENTS,
    "fft_axis_norm": FFT_AXIS_NORM,
    "fft2_arguments": FFT2_ARGUMENTS,
    "fftn_arguments": FFTN_ARGUMENTS,
    "irfft2_arguments": IRFFT2_ARGUMENTS,
    "irfftn_arguments": IRFFTN_ARGUMENTS,
    "fft_errors": FFT_ERRORS,
    "fftn_errors": FFTN_ERRORS,
    "shift_arguments": SHIFT_ARGUMENTS,
    "shift_error": SHIFT_ERROR,
    "freq_arguments": FREQ_ARGUMENTS,
    "freq_errors": FREQ_ERRORS,
    "float32_dtype": FLOAT32_DTYPE,
    "negative_dims": NEGATIVE_DIMS,
    "fill_arguments": FILL_ARGUMENTS,
    "fill_errors": FILL_ERRORS,
    "like_a": LIKE_A,
    "like_dtype": LIKE_DTYPE,
    "like_errors": LIKE_ERRORS,
    "diagonals": DIAGONALS,
    "atleast_result": ATLEAST_RESULT,
    "atleast_arys": ATLEAST_ARYS,
    "atleast_errors": ATLEAST_ERRORS,
    "float_matrices": FLOAT_MATRICES,
    "float_matrices_errors": FLOAT_MATRICES_ERRORS,
    "square_matrices": SQUARE_MATRICES,
    "eig_errors": EIG_ERRORS,
    "kernel_arguments": KERNEL_ARGUMENTS,
    "quant_mode": QUANT_MODE,
    "key": KEY,
    "random_shape": RANDOM_SHAPE,
    "window_arguments": WINDOW_ARGUMENTS,
    "window_errors": WINDOW_ERRORS,
}

# --- filling -----------------------------------------------------------------------

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
WIDTH = 84  # a filled line's length, without the docstring's indentation
_CODE = re.compile(r"``.+?``|`[^`]+`")
# A wrapped line must not begin with what Markdown reads as a list or a heading.
_MARKUP_START = re.compile(r"([-*+]|\d+[.)])(\s|$)|#|>")


def shared_doc(function):
    """``function`` with the placeholders of its docstring filled, and its
    ``stream`` line added when it takes a ``stream`` (see the module)."""
    stream = "stream" in inspect.signature(function).parameters
    function.__doc__ = fill(function.__doc__, function.__name__, stream)
    return function


def fill(doc, name, stream=False):
    """``doc`` with each ``{piece}`` replaced by its text, ``{name}`` in a piece by
    ``name``, and each paragraph or list item that held one wrapped again; with
    ``stream``, the ``stream`` argument's line ends its "Arguments:" list."""
    if not doc:
        return doc
    lines = doc.split("\n")
    if stream:
        lines = _with_stream(lines, name)
    if PLACEHOLDER.search(lines[0]):
        raise ValueError(f"[shared_doc] {name}: the first line of a docstring is the op's own")
    margin = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()),
                 default=0)
    out, unit = lines[:1], []
    for line in lines[1:] + [""]:
        stripped = line.strip()
        if not stripped or stripped.startswith(("- ", ">>>")) or _is_list(stripped):
            out.extend(_filled(unit, name, margin + WIDTH))
            unit = []
        (unit if stripped else out).append(line)
    return "\n".join(out[:-1])


def _is_list(line):
    """Whether ``line`` is a placeholder alone whose piece is list items."""
    whole = PLACEHOLDER.fullmatch(line)
    return bool(whole) and PIECES.get(whole.group(1), "").startswith("- ")


def _with_stream(lines, name):
    """The docstring's lines with ``- ``stream``: ...`` after the last item of its
    "Arguments:" list, unless it has a line for ``stream`` already."""
    if any(line.lstrip().startswith("- ``stream``") for line in lines):
        return lines
    heads = [k for k, line in enumerate(lines) if line.strip() == "Arguments:"]
    if not heads:
        raise ValueError(f"[shared_doc] {name}: takes a stream but has no Arguments: list")
    end = heads[0] + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    indent = lines[heads[0]][:len(lines[heads[0]]) - len(lines[heads[0]].lstrip())]
    return lines[:end] + [f"{indent}- ``stream``: {STREAM}"] + lines[end:]


def _filled(unit, name, width):
    """The lines of one paragraph or list item, filled and wrapped if it holds a
    placeholder, else as they were."""
    if not any(PLACEHOLDER.search(line) for line in unit):
        return unit
    indent = unit[0][:len(unit[0]) - len(unit[0].lstrip())]
    if unit[0].lstrip().startswith(">>>"):
        raise ValueError(f"[shared_doc] {name}: a placeholder in an example")
    text = PLACEHOLDER.sub(lambda m: _piece(m.group(1), name), " ".join(
        line.strip() for line in unit))
    out = []
    for part in text.split("\n"):  # a piece may hold several list items
        out.extend(_wrapped(part, indent, indent + "  " * part.startswith("- "), width))
    return out


def _piece(key, name):
    if key not in PIECES:
        raise ValueError(f"[shared_doc] {name}: no piece named {{{key}}} in docs.py")
    return PIECES[key].replace("{name}", name)


def _wrapped(text, indent, hang, width):
    """``text`` in lines of at most ``width``, a ``code`` span never broken and no
    line but the first starting as Markdown markup."""
    text = _CODE.sub(lambda m: m.group().replace(" ", "\0"), text)
    for w in range(width, width // 2, -1):
        lines = textwrap.wrap(text, w, initial_indent=indent, subsequent_indent=hang,
                              break_long_words=False, break_on_hyphens=False)
        if not any(_MARKUP_START.match(line.lstrip()) for line in lines[1:]):
            break
    return [line.replace("\0", " ") for line in lines]
