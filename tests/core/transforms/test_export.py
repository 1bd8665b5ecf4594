"""mx.export_function, mx.exporter, mx.import_function and mx.export_to_dot.

Values are compared with the function called directly and with real MLX
where it is installed; the file format is checked for stability (the same
function gives the same bytes) and every primitive class for a state that
rebuilds it (a primitive added later without one fails here)."""

import io
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

import mlxref.core as mx
from mlxref.core.primitives.base import constructor_arguments
from mlxref.core.transforms import export as export_module

from support import needs_mlx, real_mx

# Bases no node is ever built from.
ABSTRACT = {"Unary", "Binary", "Comparison", "_DynamicWindow", "_StridedWindow",
            "QuantizedProduct", "_AlongAxis", "_Permuted", "DistPrimitive"}

# Example constructor arguments of every primitive class that takes some.
SAMPLES = {
    "AsType": {"dtype": mx.int16},
    "Arange": {"start": 0.5, "stop": float("inf"), "step": -2.0, "dtype": mx.float16},
    "RandomBits": {"shape": (2, 3), "width": 4},
    "Depends": {"num_inputs": 2},
    "BitwiseBinary": {"op": "xor"},
    "Equal": {"equal_nan": True},
    "Log": {"base": "10"},
    "Round": {"decimals": 2},
    "Eig": {"compute_eigenvectors": False},
    "Eigh": {"uplo": "U", "compute_eigenvectors": False},
    "SVD": {"compute_uv": False},
    "FFT": {"axes": (0, 2), "inverse": True, "real": True, "n": 8},
    "Hadamard": {"scale": 0.25},
    "DynamicSlice": {"axes": (1,), "slice_size": (2, 3)},
    "DynamicSliceUpdate": {"axes": (0, 1)},
    "Gather": {"axes": (0, 1), "slice_sizes": (1, 1, 4), "op": "gather"},
    "GatherAxis": {"axis": 1, "op": "take_along_axis"},
    "Scatter": {"axes": (0,), "reduce_type": "sum", "op": "scatter_add"},
    "Slice": {"start_indices": (0, 1), "end_indices": (3, 4), "strides": (1, 2)},
    "SliceUpdate": {"start_indices": (0,), "end_indices": (3,), "strides": (2,), "reduce_type": "max"},
    "AddMM": {"alpha": 2.0, "beta": -0.5},
    "Inverse": {"tri": True, "upper": False},
    "BlockMaskedMM": {"block_size": 32, "shared": (None, True)},
    "GatherMM": {"left_sorted": True, "right_sorted": False},
    "ConvertFP8": {"dtype": mx.uint8},
    "FromFP8": {"dtype": mx.bfloat16},
    "GatherQMM": {"group_size": 32, "bits": 4, "mode": "affine", "transpose": True, "left_sorted": True,
                      "right_sorted": True},
    "GatherQQMM": {"group_size": 32, "bits": 4, "mode": "mxfp4"},
    "QQMatmul": {"group_size": 32, "bits": 4, "mode": "mxfp4"},
    "QuantizedMatmul": {"group_size": 64, "bits": 8, "mode": "affine", "transpose": False},
    "ArgReduce": {"kind": "argmax", "axis": 1, "keepdims": True},
    "LogSumExp": {"axes": (0, 1), "keepdims": True, "composed": True},
    "Reduce": {"kind": "prod", "axes": (1,), "keepdims": True},
    "Scan": {"axis": 1, "reverse": True, "inclusive": False, "reduce_type": "logaddexp"},
    "Softmax": {"axes": (1,), "precise": True, "composed": False},
    "AsStrided": {"shape": (2, 2), "strides": (1, 0), "offset": 3},
    "Broadcast": {"shape": (4, 1, 3)},
    "BroadcastAxes": {"ignore_axes": (-2, -1)},
    "NumberOfElements": {"axes": (0, 2), "inverted": True, "dtype": mx.float16},
    "Concatenate": {"axis": -1},
    "Contiguous": {"allow_col_major": True},
    "ExpandDims": {"axes": (0, 2)},
    "Flatten": {"start_axis": 1, "end_axis": 2},
    "Pad": {"axes": (0, 1), "low_pad_size": (1, 0), "high_pad_size": (0, 2)},
    "Reshape": {"shape": (3, -1)},
    "Split": {"indices": (1, 3), "axis": 0},
    "Squeeze": {"axes": (1,)},
    "Transpose": {"axes": (1, 0, 2)},
    "Unflatten": {"axis": 1, "shape": (2, 3)},
    "View": {"dtype": mx.uint32},
    "Cholesky": {"upper": True},
    "ArgPartition": {"kth": 2, "axis": 0},
    "ArgSort": {"axis": 0},
    "Partition": {"kth": 1, "axis": -1},
    "SearchSorted": {"right": True},
    "Sort": {"axis": 1},
    "Convolution": {"stride": (2, 1), "padding_lo": (1, 0), "padding_hi": (0, 1),
                        "kernel_dilation": (1, 2), "input_dilation": (1, 1), "groups": 2, "flip": True},
    "CustomKernel": {"kernel_name": "custom_kernel_k_floatc_float", "source": "out[0] = a[0];\n",
                     "grid": (4, 1, 1), "threadgroup": (2, 1, 1),
                     "shape_infos": ((True, False, True),), "ensure_row_contiguous": False,
                     "init_value": 0.5, "scalar_arguments": (), "is_precompiled": False,
                     "shared_memory": 0, "compile_options": 2, "input_shapes": ((2, 2),),
                     "shapes": ((4,), ()), "dtypes": (mx.float32, mx.int8)},
}

# Primitives holding Python functions or other primitives: refused, as in MLX.
NOT_EXPORTABLE = {"Compiled", "CustomTransforms", "Load", "AllGather", "AllReduce",
                  "ReduceScatter", "Recv", "Send"}


def exportable_classes():
    classes = export_module.primitive_classes()
    return sorted(n for n in classes if n not in ABSTRACT | NOT_EXPORTABLE)


@pytest.mark.parametrize("name", exportable_classes())
def test_every_primitive_round_trips_through_its_state(name):
    cls = export_module.primitive_classes()[name]
    if constructor_arguments(cls) and name not in SAMPLES:
        pytest.fail(f"{name} takes {constructor_arguments(cls)}: add an example to SAMPLES")
    primitive = cls(**SAMPLES.get(name, {}))
    text = json.dumps({k: export_module.encode(v) for k, v in primitive.state().items()},
                      allow_nan=False)
    rebuilt = cls.from_state({k: export_module.decode(v) for k, v in json.loads(text).items()})
    assert type(rebuilt) is cls
    assert rebuilt.is_equivalent(primitive), (vars(rebuilt), vars(primitive))
    if name in SAMPLES:  # the state is what the sample said, not the defaults
        assert primitive.state() == SAMPLES[name]


def test_the_samples_name_existing_classes():
    assert set(SAMPLES) <= set(export_module.primitive_classes())


def test_a_custom_function_cannot_be_exported(tmp_path):
    @mx.custom_function
    def f(x):
        return mx.sin(x)

    @f.vjp
    def f_vjp(x, cotangent, output):
        return cotangent

    with pytest.raises(ValueError, match=r"\[export_function\] Unable to serialize primitive "
                                         "CustomTransforms"):
        mx.export_function(str(tmp_path / "f.mlxfn"), f, mx.array([1.0]))


# --- round trips -----------------------------------------------------------------------


def network(x, w, idx, m=mx):
    h = m.softmax(x @ w, axis=-1)
    h = m.cumsum(h.reshape(2, -1)[:, ::2], axis=1)
    return m.sort(m.take_along_axis(h, idx, axis=1), axis=1), m.argmax(x, axis=0)


X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
W = [[1.0, -2.0, 0.5, 0.0], [0.3, 0.2, -0.1, 1.0], [2.0, 1.0, 0.0, -1.0]]
IDX = [[1, 0, 1], [0, 0, 1]]


def test_round_trip_matches_the_function_and_real_mlx(tmp_path):
    path = str(tmp_path / "net.mlxfn")
    args = (mx.array(X), mx.array(W), mx.array(IDX))
    mx.export_function(path, network, *args)
    imported = mx.import_function(path)
    new = (mx.array(X) * -2, mx.array(W) + 1, mx.array(IDX[::-1]))
    outs = imported(*new)
    assert isinstance(outs, tuple) and len(outs) == 2
    assert [o.tolist() for o in outs] == [o.tolist() for o in network(*new)]

    mlx = pytest.importorskip("mlx.core")
    np = pytest.importorskip("numpy")
    real = network(*(mlx.array(np.array(a.tolist(), dtype=np.float32 if a.dtype == mx.float32
                                         else np.int32)) for a in new), m=mlx)
    for ours, theirs in zip(outs, real):
        assert ours.shape == tuple(theirs.shape)
        assert mx.allclose(ours, mx.array(theirs.tolist(), dtype=ours.dtype)).item()


def test_keyword_inputs_are_matched_by_name(tmp_path):
    path = str(tmp_path / "kw.mlxfn")
    mx.export_function(path, lambda a, b: a - 2 * b, a=mx.array([1.0]), b=mx.array([1.0]))
    imported = mx.import_function(path)
    assert imported(b=mx.array([1.0]), a=mx.array([5.0]))[0].tolist() == [3.0]
    assert imported({"a": mx.array([5.0]), "b": mx.array([1.0])})[0].tolist() == [3.0]
    with pytest.raises(ValueError, match=r'No imported function found(.|\n)*"a": \(1\) float32'):
        imported(mx.array([5.0]), mx.array([1.0]))
    with pytest.raises(ValueError, match="a single tuple and/or dictionary of arrays"):
        imported(mx.array([5.0]), 1.0)


def test_positional_and_keyword_inputs_together(tmp_path):
    path = str(tmp_path / "mixed.mlxfn")

    def f(x, y, scale=None):
        return x * scale + y

    x, y, s = mx.array([1.0, 2.0]), mx.array([3.0, 4.0]), mx.array([10.0, 100.0])
    mx.export_function(path, f, (x, y), {"scale": s})
    imported = mx.import_function(path)
    assert imported(y, x, scale=s)[0].tolist() == f(y, x, scale=s).tolist()
    with pytest.raises(ValueError, match="No imported function"):
        imported(y, x, other=s)


def test_several_traces_in_one_file(tmp_path):
    path = str(tmp_path / "many.mlxfn")

    def f(*xs):
        return mx.concatenate([x.reshape(-1) for x in xs]) if xs else mx.zeros((1,))

    with mx.exporter(path, f) as ex:
        ex()
        ex(mx.array([1, 2]))
        ex(mx.array([[1.0]]), mx.array([2.0, 3.0]))
        with pytest.raises(RuntimeError, match="twice with the same signature"):
            ex(mx.array([7, 8]))
    with pytest.raises(RuntimeError, match="after exporting is closed"):
        ex(mx.array([1.0, 2.0, 3.0]))

    imported = mx.import_function(path)
    assert imported()[0].tolist() == [0.0]
    assert imported(mx.array([5, 6]))[0].tolist() == [5, 6]
    assert imported(mx.array([[4.0]]), mx.array([5.0, 6.0]))[0].tolist() == [4.0, 5.0, 6.0]
    # the shape was never traced; the traces are listed as MLX lists them,
    # from its map of them by number of inputs (test_import_errors_read_as_mlxs)
    with pytest.raises(ValueError, match=r"(?s) 1\. Function with 2 positional inputs.*"
                       r"\n 2\. Function with 1 positional inputs.*\n 3\. Function with 0 "):
        imported(mx.array([1, 2, 3]))
    with open(path) as fh:
        assert len(json.load(fh)["functions"]) == 3


def test_shapeless_replays_on_other_shapes(tmp_path):
    path = str(tmp_path / "shapeless.mlxfn")

    def f(x, y):
        return mx.exp(x) - mx.abs(y)

    mx.export_function(path, f, mx.array([1.0, 2.0]), mx.array([3.0, -4.0]), shapeless=True)
    imported = mx.import_function(path)
    x, y = mx.array([0.5, 1.0, 1.5]), mx.array([1.0, -2.0, 3.0])
    assert imported(x, y)[0].tolist() == f(x, y).tolist()
    with pytest.raises(ValueError, match="No imported function"):
        imported(mx.array([1, 2]), mx.array([1, 2]))  # dtypes still have to match
    with pytest.raises(ValueError, match="No imported function"):
        imported(mx.array(1.0), mx.array(2.0))  # and ranks


def test_shapeless_replays_broadcasts_means_and_reshapes(tmp_path):
    # The nodes that hold a shape when traced with shapes (a broadcast of a
    # scalar or of row means, a count, a reshape with -1) are traced as a
    # shapeless compile traces them, so the file replays on other shapes.
    path = str(tmp_path / "dynamic.mlxfn")

    def f(x, w):
        centred = x - mx.mean(x, axis=-1, keepdims=True)
        return mx.sum((centred * 2 + 1).reshape(-1) ** 2) + (x @ w).sum()

    x, w = mx.ones((2, 3)), mx.ones((3, 4))
    mx.export_function(path, f, x, w, shapeless=True)
    imported = mx.import_function(path)
    x, w = mx.arange(20, dtype=mx.float32).reshape(4, 5), mx.ones((5, 2))
    assert imported(x, w)[0].tolist() == f(x, w).tolist()


def test_constants_are_stored_once_and_compactly(tmp_path):
    path = str(tmp_path / "const.mlxfn")
    zeros, weight = mx.zeros((64, 64)), mx.array([[1.5, -2.0], [0.25, 4.0]])
    start = mx.array([[1.0], [1.0]])
    mx.eval(zeros, weight)

    def f(*xs):
        return zeros[:2, :2] + weight @ sum(xs, start)

    with mx.exporter(path, f) as ex:
        ex(mx.array([[1.0], [2.0]]))
        ex(mx.array([[1.0], [2.0]]), mx.array([[3.0], [4.0]]))
    with open(path) as fh:
        doc = json.load(fh)
    shapes = sorted(c["shape"] for c in doc["constants"])
    assert shapes == [[2, 1], [2, 2], [64, 64]]  # each once, for both traces
    (big,) = [c for c in doc["constants"] if c["shape"] == [64, 64]]
    assert big["runs"] == [[0.0, 64 * 64]]
    assert os.path.getsize(path) < 4000
    imported = mx.import_function(path)
    a, b = mx.array([[2.0], [-1.0]]), mx.array([[0.5], [0.5]])
    assert imported(a, b)[0].tolist() == f(a, b).tolist()


def test_special_elements_survive(tmp_path):
    path = str(tmp_path / "special.mlxfn")
    c = mx.array([float("nan"), float("inf"), -0.0, 1e-40])
    z = mx.array([1 + 2j, -0.5j])
    mx.export_function(path, lambda x: (x + c, z * 2), mx.array(1.0))
    out, outz = mx.import_function(path)(mx.array(0.0))
    expected = (mx.array(0.0) + c).tolist()
    assert str(out.tolist()) == str(expected)
    assert outz.tolist() == (z * 2).tolist()


def test_the_same_function_gives_the_same_bytes(tmp_path):
    def build():
        w = mx.array([[1.0, 2.0], [3.0, 4.0]])

        def f(x, y):
            return mx.maximum(x @ w, y).sum(axis=0)

        return f

    files = []
    for k in range(2):
        path = tmp_path / f"f{k}.mlxfn"
        mx.export_function(str(path), build(), mx.array([[1.0, -1.0]]), y=mx.array([0.5, 0.5]))
        files.append(path.read_bytes())
    assert files[0] == files[1]
    header = json.loads(files[0])
    assert (header["format"], header["version"], header["mlxref_version"]) == \
        ("mlxref.export", 1, mx.__version__)


SCRIPT = textwrap.dedent("""
    import sys
    import mlxref.core as mx
    extra = [mx.random.normal((5,)) for _ in range(int(sys.argv[2]))]  # other ids
    w = mx.random.normal((3, 3), key=mx.random.key(1))
    mx.eval(w)

    def f(x, y=None):
        return mx.softmax(x @ w, axis=-1) + y, mx.sort(x, axis=0)

    mx.export_function(sys.argv[1], f, mx.ones((2, 3)), y=mx.zeros((2, 3)))
""")


def test_the_bytes_do_not_depend_on_the_process(tmp_path):
    files = [tmp_path / "a.mlxfn", tmp_path / "b.mlxfn"]
    for extra, path in enumerate(files):
        subprocess.run([sys.executable, "-c", SCRIPT, str(path), str(3 * extra)], check=True,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert files[0].read_bytes() == files[1].read_bytes()


def test_metadata(tmp_path):
    path = str(tmp_path / "meta.mlxfn")
    mx.export_function(path, mx.abs, mx.array([-1.0]), metadata='{"name": "abs"}')
    fun, metadata = mx.import_function(path, return_metadata=True)
    assert metadata == '{"name": "abs"}' and fun(mx.array([-3.0]))[0].tolist() == [3.0]
    with pytest.raises(TypeError, match="metadata"):
        mx.export_function(path, mx.abs, mx.array([-1.0]), metadata={"name": "abs"})
    with pytest.raises(ValueError, match="only supported when exporting to a file"):
        mx.export_function(lambda info: None, mx.abs, mx.array([-1.0]), metadata="x")


def test_callback_sees_the_trace():
    seen = []
    mx.export_function(seen.append, lambda x, y: mx.log2(x * y).astype(mx.int32),
                       mx.array(2.0), y=mx.array(4.0))
    kinds = [e["type"] for e in seen]
    assert kinds == ["inputs", "keyword_inputs", "outputs", "constants",
                     "primitive", "primitive", "primitive"]
    assert seen[0]["inputs"] == [("A", (), mx.float32), ("B", (), mx.float32)]
    assert seen[1]["keywords"] == [("y", "B")]
    assert [(e["name"], e["arguments"]) for e in seen[4:]] == [
        ("Multiply", []), ("Log", [0]), ("AsType", [mx.int32])]


@pytest.mark.mlx
@needs_mlx
def test_callback_records_and_keyword_arrays_come_in_mlxs_order():
    """Each record is a C++ map, and the keyword arrays reach the function
    from one (filled in sorted order): Python sees both in the maps' order
    (mlxref/core/unordered_map.py)."""
    def trace(lib):
        seen, received = [], []

        def fun(x, **kw):
            received.extend(kw)
            for v in kw.values():
                x = x * v
            return x.astype(lib.int32)

        keywords = {k: lib.array([2.0]) for k in ("w5", "beta", "w0", "alpha", "w12", "w3")}
        lib.export_function(seen.append, fun, lib.array([1.0]), **keywords)
        return [repr(r) for r in seen], [list(r) for r in seen], received

    ours, theirs = trace(mx), trace(real_mx)
    assert ours == theirs
    assert ours[1][0] == ["inputs", "type"]  # not the order MLX fills them in
    assert ours[2] != sorted(ours[2])


@pytest.mark.mlx
@needs_mlx
def test_the_trace_keeps_full_and_drops_copy_and_stop_gradient_as_mlx():
    """compile_simplify drops exactly Copy and StopGradient (MLX's ``is_noop``
    compares typeids); ``Full``, a Copy subclass in mlxref, stays, so ``ones``
    is a Broadcast then a Full in the trace, as in MLX's."""
    def names(lib):
        seen = []
        lib.export_function(seen.append, lambda x: (
            lib.stop_gradient(x) + lib.ones((3,), lib.uint8), lib.full((2, 3), x),
            lib.zeros_like(x)), lib.array([1.0, 2.0, 3.0]))
        return [r["name"] for r in seen if r["type"] == "primitive"]

    assert names(mx) == names(real_mx)
    assert names(mx).count("Full") == 3 and "StopGradient" not in names(mx)


@pytest.mark.mlx
@needs_mlx
def test_import_errors_read_as_mlxs(tmp_path):
    """The message lists the traces from MLX's map of them by number of inputs,
    the keyword arrays of the call from MLX's map of them, and ends as MLX's."""
    def message(lib):
        path = str(tmp_path / f"{lib.__name__}.mlxfn")
        with lib.exporter(path, lambda *xs, **kw: sum(xs) + sum(kw.values())) as ex:
            for k, n in enumerate((3, 1, 14, 2)):
                ex(*[lib.zeros((k + 1,)) for _ in range(n)])
            ex(lib.zeros((1,)), b=lib.zeros((1,)), a=lib.zeros((2,)))
        with pytest.raises(ValueError) as info:
            lib.import_function(path)(lib.array(1), zz=lib.array(1.0), b=lib.array(2.0),
                                      a=lib.array([1.0]), c=lib.array([1]))
        return str(info.value)

    assert message(mx) == message(real_mx)


def test_bad_inputs_and_outputs(tmp_path):
    path = str(tmp_path / "bad.mlxfn")
    with pytest.raises(ValueError, match=r"\[export_function\] Inputs can either be"):
        mx.export_function(path, mx.abs, [[mx.array(1.0)]])
    with pytest.raises(ValueError, match=r"\[export_function\] Outputs can be either"):
        mx.export_function(path, lambda: (mx.zeros((2,)), 3))


# --- errors reading a file -----------------------------------------------------------------


def exported(tmp_path):
    path = tmp_path / "good.mlxfn"
    mx.export_function(str(path), lambda x: mx.sin(x) * 2, mx.array([1.0, 2.0]))
    return path


def check_refused(path, words):
    with pytest.raises((ValueError, RuntimeError)) as info:
        mx.import_function(str(path))
    message = str(info.value)
    assert message.startswith("[import_function]") and str(path) in message
    assert words in message
    assert info.value.__cause__ is None or isinstance(info.value, RuntimeError)


def test_missing_file(tmp_path):
    check_refused(tmp_path / "nowhere.mlxfn", "Failed to open")


def test_truncated_file(tmp_path):
    path = exported(tmp_path)
    path.write_bytes(path.read_bytes()[:150])
    check_refused(path, "is not an mlxref export")


def test_wrong_version(tmp_path):
    path = exported(tmp_path)
    doc = json.loads(path.read_text())
    doc["version"] = 99
    path.write_text(json.dumps(doc))
    check_refused(path, "has format version 99")


def test_other_json(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"hello": 1}')
    check_refused(path, "is not an mlxref export")


@pytest.mark.parametrize("damage", [
    lambda d: d["functions"][0]["nodes"][0].update(primitive="NoSuchPrimitive"),
    lambda d: d["functions"][0]["nodes"][1].update(inputs=[["node", 7, 0], ["input", 0]]),
    lambda d: d["functions"][0].pop("outputs"),
    lambda d: d["constants"][0].update(elements=["a"]),
    lambda d: d["constants"][0].update(shape=[5]),
    lambda d: d["functions"][0]["nodes"][0]["state"].update(bogus=1),
])
def test_damaged_file(tmp_path, damage):
    path = exported(tmp_path)
    doc = json.loads(path.read_text())
    damage(doc)
    path.write_text(json.dumps(doc))
    check_refused(path, "")


def test_a_file_written_by_real_mlx(tmp_path):
    mlx = pytest.importorskip("mlx.core")
    path = tmp_path / "real.mlxfn"
    mlx.export_function(str(path), lambda x: mlx.sin(x), mlx.array([1.0]))
    check_refused(path, f"was written by MLX {mlx.__version__} in MLX's binary format")


# --- DOT ---------------------------------------------------------------------------------------


def test_export_to_dot_writes_mlx_s_dot_text(tmp_path):
    x, y = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    out = mx.exp(x) * y
    path = tmp_path / "g.dot"
    mx.export_to_dot(str(path), out, x=x, y=y)
    # MLX's structure (mlx/graph_utils.cpp); the primitives numbered in the order
    # written where MLX prints their addresses; the names counted after x and y.
    expected = "\n".join([
        "digraph {",
        '{ rank=source; "x"; }',
        '{ 1 [label ="Exp", shape=rectangle]; }',
        '"x" -> 1',
        '{ "C"; }',
        '1 -> "C"',
        '{ rank=source; "y"; }',
        '{ 2 [label ="Multiply", shape=rectangle]; }',
        '"C" -> 2',
        '"y" -> 2',
        '{ rank=sink; "D"; }',
        '2 -> "D"',
        "}",
    ])
    assert path.read_text() == expected
    buffer = io.StringIO()
    mx.export_to_dot(buffer, out, x=x, y=y)
    assert buffer.getvalue() == expected
    with pytest.raises(ValueError, match=r"\[export_to_dot\] Accepts file-like objects"):
        mx.export_to_dot(3, out)


def _dot_programs(lib):
    """Graphs mlxref builds node for node as MLX does, as (args, kwargs) of export_to_dot."""
    x = lib.array(1.0)
    yield (lib.sin(x) * lib.exp(x),), {"x": x}
    quotient, remainder = lib.divmod(lib.array([5, 7]), lib.array([3, 2]))
    yield (quotient + 1, remainder), {}  # a primitive with two outputs
    v = lib.array([1.0, 2.0])
    yield (v * 2.0 + lib.array(1.0),), {"v": v}  # broadcasts
    z = lib.sin(v)
    lib.eval(z)
    yield (z * z,), {"z": z}  # an evaluated array is an input
    y = x
    for k in range(30):  # more names than letters: ..., Z, AA, AB, ...
        y = y + lib.array(float(k))
    yield (y,), {}
    m = lib.array([[1.0, 2.0], [3.0, 4.0]])
    yield (lib.transpose(m) @ m, lib.reshape(m, (4,))[1:3]), {"m": m}
    yield (), {"m": m}
    yield (), _compiled_call(lib)


def _compiled_call(lib):
    """A compiled call's outputs and inputs, by name: mlxref runs it as one
    program node, MLX as the tape's nodes (a shared broadcast, two fused
    nodes and a matmul); the DOT text draws the tape either way."""
    def fun(x, y, z):
        yy = lib.broadcast_to(y, z.shape)
        return x + yy * z, lib.exp(yy) @ z

    a, b = lib.array([[1.0, 2.0], [3.0, 4.0]]), lib.array(0.5)
    c = lib.array([[0.5, -1.0], [2.0, 0.25]])
    d1, d2 = lib.compile(fun)(a, b, c)
    return {"a": a, "b": b, "c": c, "d1": d1, "d2": d2}


def test_export_to_dot_of_a_compiled_call_draws_the_program_s_tape():
    out = io.StringIO()
    mx.export_to_dot(out, **_compiled_call(mx))
    text = out.getvalue()
    assert "CompiledProgram" not in text
    labels = re.findall(r'label ="(\w+)"', text)
    assert labels == ["CompiledBroadcastMultiplyAdd", "CompiledBroadcastExp", "Matmul"]
    # The program's own value (exp of the broadcast) is read by the matmul:
    # drawn as an intermediate, not an output.
    assert '{ "F"; }' in text and '2 -> "F"' in text and '"F" -> 3' in text


def _renumbered(text):
    """MLX's DOT text with each primitive's address replaced by 1, 2, ... in order."""
    numbers = {}
    return re.sub(r'(?<!")\b\d{5,}\b(?!")',
                  lambda m: str(numbers.setdefault(m.group(0), len(numbers) + 1)), text)


def test_export_to_dot_matches_real_mlx():
    mlx = pytest.importorskip("mlx.core")
    for (args, kwargs), (their_args, their_kwargs) in zip(_dot_programs(mx), _dot_programs(mlx)):
        ours, theirs = io.StringIO(), io.StringIO()
        mx.export_to_dot(ours, *args, **kwargs)
        mlx.export_to_dot(theirs, *their_args, **their_kwargs)
        assert ours.getvalue() == _renumbered(theirs.getvalue())
