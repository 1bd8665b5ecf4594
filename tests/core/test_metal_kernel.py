"""``mx.fast.metal_kernel`` (mlxref/core/fast.py) and its ``CustomKernel`` node
(mlxref/core/primitives/fast.py), against MLX's CPU build: a callable that
raises when called, except while ``export_function`` traces, where it records
the kernel MLX would compile; the records, the generated source and the
errors are compared with real MLX's.
"""

import re

import pytest

import mlxref.core as mx
from support import needs_mlx, real_mx

pytestmark = [needs_mlx, pytest.mark.skipif(
    real_mx is not None and real_mx.metal.is_available(),
    reason="real MLX has a GPU here and would run the kernels")]


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


def plain(value):
    """A callback record's value with dtypes as names and tuples as lists."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if k != "constants"}
    if isinstance(value, (mx.Dtype, real_mx.Dtype)):
        return str(value).split(".")[-1]
    return value


def records(m, kernel_args, call_args, x):
    """What ``export_function``'s callback gets, in library ``m``, for a function
    calling one kernel built with ``kernel_args`` and called with ``call_args``
    (a function of the library and the input)."""
    kernel = m.fast.metal_kernel(**kernel_args)
    got = []
    m.export_function(lambda r: got.append(plain(r)),
                      lambda a: kernel(**call_args(m, a), stream=m.gpu), x)
    return got


COPY = dict(name="copy", input_names=["a"], output_names=["out"],
            source="uint i = thread_position_in_grid.x;\nout[i] = a[i];")

KERNELS = {
    "one input, one attribute": (COPY, lambda m, a: dict(
        inputs=[a], output_shapes=[a.shape], output_dtypes=[a.dtype],
        grid=(a.size, 1, 1), threadgroup=(2, 1, 1))),
    "a scalar input, templates, init_value, math mode": (
        dict(name="k", input_names=["a", "n"], output_names=["out", "count"],
             source="uint e = thread_position_in_grid.x; out[e] = a[e] * a_shape[0];",
             compile_options={"math_mode": "fast"}),
        lambda m, a: dict(inputs=[a, 3], output_shapes=[a.shape, (3,)],
                          output_dtypes=[m.float16, m.int32], grid=(4, 1, 1),
                          threadgroup=(4, 1, 1), init_value=1.5,
                          template=[("T", m.bfloat16), ("N", 3), ("flag", True)])),
    "shape, strides and ndim buffers, no attribute, atomic outputs": (
        dict(name="s", input_names=["a", "b"], output_names=["o", "p"], header="// head\n",
             source="o[0] = a_shape[0] + a_strides[0] + b_ndim;", atomic_outputs=True,
             ensure_row_contiguous=False),
        lambda m, a: dict(inputs=[a, m.ones((3, 3), m.uint8)], output_shapes=[(1,), (2,)],
                          output_dtypes=[m.float32, m.uint32], grid=(1, 1, 1),
                          threadgroup=(1, 1, 1))),
}


@pytest.mark.parametrize("case", KERNELS)
def test_an_export_records_the_kernel_mlx_generates(case):
    kernel_args, call_args = KERNELS[case]
    shape = (2, 5) if "buffers" in case else (2, 2)  # 10 elements: "device" memory
    ours = records(mx, kernel_args, call_args, mx.zeros(shape))
    theirs = records(real_mx, kernel_args, call_args, real_mx.zeros(shape))
    assert ours == theirs
    assert [r["name"] for r in ours if r["type"] == "primitive"][-1] == "CustomKernel"


def test_verbose_prints_the_generated_source(capfd):  # MLX prints from C++
    source = {}
    for m in (mx, real_mx):
        kernel = m.fast.metal_kernel(**COPY)
        m.export_function(lambda r: None, lambda a: kernel(
            inputs=[a], output_shapes=[a.shape], output_dtypes=[a.dtype], grid=(4, 1, 1),
            threadgroup=(4, 1, 1), verbose=True, stream=m.gpu)[0], m.ones((4,)))
        source[m] = capfd.readouterr().out
    assert "[[kernel]] void custom_kernel_copy_floatc_float(" in source[mx]
    assert source[mx] == source[real_mx]


def call(m, kernel, a, **kwargs):
    arguments = dict(inputs=[a], output_shapes=[a.shape], output_dtypes=[a.dtype],
                     grid=(4, 1, 1), threadgroup=(4, 1, 1))
    arguments.update(kwargs)
    return kernel(**arguments)


def test_a_call_outside_an_export_raises_mlxs_error():
    for m in (mx, real_mx):
        kernel = m.fast.metal_kernel(**COPY)
        a = m.ones((4,))
        for stream in (None, m.gpu, m.cpu):
            with raises(RuntimeError, "[metal_kernel] No Metal back-end."):
                call(m, kernel, a, stream=stream)
        with raises(RuntimeError, "[metal_kernel] No Metal back-end."):
            m.compile(lambda x: call(m, kernel, x)[0])(a)


ERRORS = [
    # (metal_kernel's arguments, the call's, in export?, error, message)
    ({"output_names": []}, {}, False, ValueError,
     "[metal_kernel] Must specify at least one output."),
    ({"compile_options": {"math_mode": "precise"}}, {}, False, ValueError,
     "[metal_kernel] Expected math_mode to be 'safe', 'relaxed', or 'fast'."),
    ({"compile_options": {"unroll": 1}}, {}, False, ValueError,
     "[metal_kernel] Unknown compile option `unroll`."),
    ({"compile_options": 3}, {}, False, ValueError,
     "[metal_kernel] Expected `compile_options` to be a dict."),
    ({}, {"inputs": []}, False, ValueError,
     "[metal_kernel] Expected `inputs` to have size 1 but got size 0.\n"),
    ({}, {"output_shapes": []}, True, ValueError,
     "[metal_kernel] Expected `output_shapes` to have size 1 but got size 0.\n"),
    ({}, {"output_dtypes": ["two", "three"]}, True, ValueError,
     "[metal_kernel] Expected `output_dtypes` to have size 1 but got size 2.\n"),
    ({}, {"template": [("T", 1.5)]}, True, ValueError,
     "[metal_kernel] Invalid template argument. Must be `mlx.core.Dtype`, `int` or `bool`."),
    ({}, {"stream": "cpu"}, True, ValueError, "[metal_kernel] Only supports the GPU."),
    ({}, {"stream": "cpu device"}, True, ValueError, "[metal_kernel] Only supports the GPU."),
    ({}, {"stream": "cpu stream"}, True, ValueError, "[metal_kernel] Only supports the GPU."),
]


def _resolve(m, value):
    if not isinstance(value, str):
        return value
    return {"cpu": m.cpu, "cpu device": m.Device(m.cpu),
            "cpu stream": m.default_stream(m.cpu)}[value]


@pytest.mark.parametrize("kernel_args, call_args, in_export, error, message", ERRORS)
def test_errors_are_mlxs(kernel_args, call_args, in_export, error, message):
    for m in (mx, real_mx):
        a = m.ones((4,))
        call_args_m = {k: _resolve(m, v) for k, v in call_args.items()}
        if "output_dtypes" in call_args_m:
            call_args_m["output_dtypes"] = [m.float32] * len(call_args_m["output_dtypes"])

        def run():
            kernel = m.fast.metal_kernel(**{**COPY, **kernel_args})
            if in_export:
                m.export_function(lambda r: None, lambda x: call(m, kernel, x, **call_args_m)[0], a)
            else:
                call(m, kernel, a, **call_args_m)

        with raises(error, message):
            run()


def test_a_kernel_has_no_derivative_or_batching_rule():
    kernel = mx.fast.metal_kernel(**COPY)
    a = mx.ones((4,))
    f = lambda x: call(mx, kernel, x, stream=mx.gpu)[0]  # noqa: E731
    for transform, rule in ((mx.grad(lambda x: f(x).sum()), "vjp"), (mx.vmap(f), "vmap")):
        with raises(ValueError, f"[Primitive::{rule}] Not implemented for CustomKernel."):
            mx.export_function(lambda r: None, transform, mx.ones((2, 4)) if rule == "vmap" else a)


def test_an_exported_kernel_is_imported_and_cannot_run_here(tmp_path):
    kernel = mx.fast.metal_kernel(**COPY)
    a = mx.ones((2, 3))

    def fun(x):
        return call(mx, kernel, x, output_shapes=[(6,)], output_dtypes=[mx.int32],
                    stream=mx.gpu)[0]

    for shapeless in (False, True):
        path = tmp_path / f"kernel_{shapeless}.mlxfn"
        mx.export_function(str(path), fun, a, shapeless=shapeless)
        (out,) = mx.import_function(str(path))(a)
        assert out.shape == (6,) and out.dtype == mx.int32
        with raises(RuntimeError, "[gpu::eval] GPU backend is not available"):
            mx.eval(out)
    # MLX cannot infer a kernel's output shapes for other inputs
    with raises(ValueError, "[Primitive::output_shapes] CustomKernel cannot infer output shapes."):
        mx.import_function(str(path))(mx.ones((3, 3)))
