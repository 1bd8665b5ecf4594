"""The OS layer of the grader's sandbox: bubblewrap (mlxref/course/sandbox.py, ``isolated``).

Each test runs a small program in the view ``sandbox.isolated`` gives a task's child,
with none of the Python-level layers (no static check, no audit hook): what it cannot
do here, it cannot do in a graded run either, whatever got past those layers. The last
test grades a submission whose region, with the static check off, uses a way around
the audit hook (a file opened relative to a directory descriptor): it wrote beside the
scratch copy when the audit hook was the only guard.

Where bubblewrap cannot run, these tests skip with one line saying what to install;
CI installs it (``make bwrap``).
"""

import json
import os
import sys
import textwrap

import pytest
from course.test_grader import reference, submit  # noqa: F401  (the fixture)

from mlxref.course import grader, sandbox

needs_bwrap = pytest.mark.skipif(sandbox.isolation() is not None,
                                 reason=str(sandbox.isolation()))


def inside(tmp_path, program, readable=(), tmp_size=sandbox.TMP_SIZE, env=None):
    """Run ``program`` (Python source) in the isolated view of a task directory
    under ``tmp_path``; returns what it printed as JSON."""
    work = tmp_path / "task"
    (work / "tmp").mkdir(parents=True)
    argv = sandbox.isolated([sandbox.python(), "-I", "-S", "-c", textwrap.dedent(program)],
                            work, list(readable), tmp_size=tmp_size)
    status, out, err = sandbox.run(argv, env or sandbox.clean_environment(str(work)),
                                   str(work / "tmp"), "", timeout=60)
    assert status == 0, err
    return json.loads(out.strip().splitlines()[-1])


@needs_bwrap
def test_only_the_task_directory_and_the_system_are_in_view(tmp_path):
    beside = tmp_path / "reference-answer.py"
    beside.write_text("the answer")
    seen = inside(tmp_path, f"""
        import json, os, sys
        def can_read(path):
            try:
                with open(path) as f:
                    return f.read()
            except OSError as exc:
                return type(exc).__name__
        print(json.dumps({{
            "beside": can_read({str(beside)!r}),
            "own": os.path.isdir({str(tmp_path / "task")!r}),
            "parent": sorted(os.listdir({str(tmp_path)!r})),
            "site": sorted(os.listdir(os.path.join(sys.base_prefix, "lib",
                                                   "python%d.%d" % sys.version_info[:2],
                                                   "site-packages"))),
            "venv": os.path.exists({os.path.realpath(sys.prefix)!r}),
        }}))
    """)
    assert seen["beside"] == "FileNotFoundError"  # the instructor's files do not exist there
    assert seen["own"] and seen["parent"] == ["task"]
    assert seen["site"] == []  # the interpreter's packages, real MLX among them, are not there
    assert seen["venv"] is False or os.path.realpath(sys.prefix) == os.path.realpath(
        sys.base_prefix)


@needs_bwrap
def test_nothing_outside_the_task_directory_reaches_the_disk(tmp_path):
    target = tmp_path / "written"
    seen = inside(tmp_path, f"""
        import json, os
        done = {{}}
        for name, path in (("beside", {str(target)!r}), ("usr", "/usr/mlxref-was-here"),
                           ("own", {str(tmp_path / "task" / "tmp" / "ok")!r})):
            try:
                with open(path, "w") as f:
                    f.write("x")
                done[name] = "written"
            except OSError as exc:
                done[name] = type(exc).__name__
        # relative to a directory descriptor, and from a process of its own
        root = os.open("/", os.O_RDONLY)
        try:
            os.close(os.open({str(target)[1:]!r}, os.O_WRONLY | os.O_CREAT, dir_fd=root))
            done["dir_fd"] = "written"
        except OSError as exc:
            done["dir_fd"] = type(exc).__name__
        done["shell"] = os.system("echo x > {target} 2>/dev/null")
        print(json.dumps(done))
    """)
    assert seen["own"] == "written" and seen["usr"] != "written"
    # tmp_path is under /tmp, which in the view is the child's private tmpfs: a file
    # "beside" the task lands there, and is gone with the run; the real one never is.
    assert not target.exists()


@needs_bwrap
def test_no_network_and_no_other_process(tmp_path, monkeypatch):
    monkeypatch.setenv("MLXREF_GRADER_SECRET", "the grader's environment")
    seen = inside(tmp_path, """
        import json, os, socket
        done = {}
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=5)
            done["connect"] = "connected"
        except OSError as exc:
            done["connect"] = type(exc).__name__
        try:
            socket.gethostbyname("example.com")
            done["lookup"] = "resolved"
        except OSError as exc:
            done["lookup"] = type(exc).__name__
        environs = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open("/proc/%s/environ" % pid, "rb") as f:
                        environs.append(f.read().decode("latin-1"))
                except OSError:
                    pass
        done["secret"] = any("MLXREF_GRADER_SECRET" in e for e in environs)
        done["pids"] = sum(p.isdigit() for p in os.listdir("/proc"))
        print(json.dumps(done))
    """)
    assert seen["connect"] != "connected" and seen["lookup"] != "resolved"
    assert seen["secret"] is False  # neither the grader's environment nor its processes
    assert seen["pids"] <= 3  # bubblewrap's init, the supervisor's child, and this process


@needs_bwrap
def test_the_private_tmp_has_a_size(tmp_path):
    seen = inside(tmp_path, """
        import json
        try:
            with open("/tmp/big", "wb") as f:
                for _ in range(8):
                    f.write(b"x" * (1 << 20))
                    f.flush()
            print(json.dumps("written"))
        except OSError as exc:
            print(json.dumps(type(exc).__name__))
    """, tmp_size=2 << 20)
    assert seen == "OSError"  # No space left on device, at 2 MiB


@needs_bwrap
def test_a_region_that_writes_through_a_directory_descriptor(tmp_path, reference):  # noqa: F811
    """With the static check off, a region opens a file relative to a descriptor of
    "/": the audit hook sees only the relative name, which looks like a name in the
    task's own directory. Bubblewrap's view has no such file to reach."""
    target = tmp_path / "written-by-the-submission"
    sub = submit(tmp_path / "sub", reference, {("2.3", "Divide.partial"): (
        "import os\n"
        "root = os.open('/', os.O_RDONLY)\n"
        f"os.close(os.open({str(target)[1:]!r}, os.O_WRONLY | os.O_CREAT, dir_fd=root))\n"
        "return b")})
    results, _ = grader.grade(sub, "2.3", reference=reference, timeout=120, check=False)
    assert not target.exists()
    assert not results["2.3"]["passed"]


def test_exam_grading_needs_isolation(tmp_path, reference, monkeypatch):  # noqa: F811
    monkeypatch.setattr(sandbox, "_ISOLATION", ["bubblewrap is not installed: install it"])
    with pytest.raises(ValueError, match=r"--exam needs OS isolation, and bubblewrap is not"):
        grader.grade(reference, "1.1", reference=reference, exam=True)


def test_the_command_line_says_when_it_cannot_isolate(reference, monkeypatch, capsys):  # noqa: F811
    from mlxref.cli import main

    monkeypatch.setattr(sandbox, "_ISOLATION", ["bubblewrap is not installed: install it"])
    assert main(["assignment", "grade", str(reference), "--reference", str(reference),
                 "--tasks", "1.1", "--exam"]) == 2
    assert "--exam needs OS isolation" in capsys.readouterr().err
    main(["assignment", "grade", str(reference), "--reference", str(reference),
          "--tasks", "1.1", "--json", "--timeout", "120"])
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["[assignment grade] not isolated: bubblewrap is not installed: install it; "
                   "graded code ran with the grader's own checks only (fine for a student "
                   "checking their work, not for marks: use --exam where it matters)"]
