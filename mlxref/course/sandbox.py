"""Where ``mlxref assignment grade`` runs a student's code: the static check of a
region, the child process and its limits.

Four layers, each with its own job:

1. ``check_region``: before anything runs, the region's syntax tree is read
   and refused if it imports anything but mlxref's own modules and ``math``,
   or names ``open``, ``exec``, ``eval``, ``os``, ``subprocess``, a dunder
   attribute and the like (``_REFUSED_NAMES``). A denylist of constructs,
   not a proof: it stops the usual ways out, with a message naming the
   construct and the student's line.
2. ``site_packages``: the child's ``sys.path`` is the standard library, the
   scratch copy, and a directory of links to the few packages the graded
   code needs (sympy, numpy, graphviz and their requirements). No ``.pth`` file, no ``*.dist-info``: the child cannot
   import ``mlx`` (a meta-path finder refuses it too) or find the
   instructor's checkout through ``importlib.metadata`` (the installed
   ``mlxref`` dist-info points there).
3. ``CHILD``, the child's program: before any graded code runs it installs
   an audit hook (PEP 578, which cannot be removed) that refuses writes,
   deletions and renames outside the task's tmp/ and home/ (the copy's
   sources, test data and compiled files included), reads of the
   instructor's checkout, of the submission, of the other tasks' copies and
   of other processes' /proc entries, new processes, signals, sockets and
   ctypes.
4. ``run``: the child is ``python -I -S`` (isolated, no ``site``) with a
   scrubbed environment, started by a small supervisor (this file's source,
   run with ``-c``) in a session of its own, with ``RLIMIT_CPU``,
   ``RLIMIT_AS``, ``RLIMIT_FSIZE``, ``RLIMIT_NOFILE`` and ``RLIMIT_NPROC``.
   The supervisor enforces the wall-clock, process-count (``PROCESSES``:
   root ignores ``RLIMIT_NPROC``) and disk (``DISK_LIMIT``) limits by
   killing the child's whole process group, and, as a Linux child
   subreaper, also kills every process the child detached (``setsid``,
   double fork). The parent reads at most ``OUTPUT_LIMIT`` bytes of output
   and stops the run past it. The parent reads the results from the child's
   stdout, on lines that start with a random token it handed the child on
   stdin before any graded code ran; there is no report file to rewrite.

5. ``isolated``: on Linux, where bubblewrap can make namespaces
   (``isolation()`` is None), the child runs in a view of exactly what it
   needs: no network, its own process tree, the system and the standard
   library and the linked packages read-only, the copy read-only, its task
   directory's tmp/ and home/ and a private /tmp of ``TMP_SIZE`` bytes the
   places it may write. The instructor's
   checkout, the submission, the other tasks' copies and the interpreter's
   site-packages are not in that view, so what gets past layers 1 and 3 (the
   audit hook does not see a file opened relative to a directory descriptor)
   still cannot reach them.

No test runs in the child: it answers the tests' calls (``CONFIG["calls"]``,
mlxref/course/judge.py), one at a time, with data, and trusted processes
decide every verdict, so code that got past the static check can change a
grade only through its own results. Grade untrusted code at scale inside a
container too (``CONTAINER``).

This module imports only the standard library: it runs as the supervisor
with ``python -I -S -c``.
"""

from __future__ import annotations

import ast
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time

# The command recommended for grading untrusted submissions at scale: an image
# with the instructor's checkout installed (``pip install -e /reference[dev]``),
# no network, a read-only root with a small /tmp, memory, CPU and process
# limits, no capabilities, an unprivileged user, and the submission read-only.
CONTAINER = (
    "docker run --rm --network none --read-only --tmpfs /tmp:rw,size=1g -e HOME=/tmp "
    "--memory 4g --cpus 2 --pids-limit 256 --cap-drop ALL "
    "--security-opt no-new-privileges --user 65534:65534 "
    "-v \"$PWD/submission:/submission:ro\" mlxref-grader "
    "mlxref assignment grade /submission --json"
)

# --- 1. the static check --------------------------------------------------------------

_ALLOWED_IMPORTS = ("math",)  # besides mlxref and its submodules

# Names and attributes a region may not use. Builtins that run or reach code by
# name, modules that reach the system, mlxref's own functions that write or
# read files or run the grader, what reads an attribute named by a string
# (``operator.attrgetter("__globals__")``, ``"{0.__class__}".format(f)``),
# SymPy, whose parser evaluates text as Python, and the standard library's
# functions that import or evaluate a name or text given as a string, or walk
# the heap (``pkgutil.resolve_name("ctypes:CFUNCTYPE")``, ``typing.get_type_hints``
# and ``functools.singledispatch`` of a string annotation, ``gc``), which a red
# team found reachable through mlxref's modules' public attributes.
_REFUSED_NAMES = frozenset(
    """
    open exec eval compile __import__ globals locals vars breakpoint input help exit
    quit memoryview getattr setattr delattr
    os sys subprocess importlib builtins __builtins__ shutil pathlib Path tempfile io
    socket ctypes signal resource inspect gc atexit threading multiprocessing pickle
    marshal runpy code pty mmap fcntl select asyncio environ system popen spawn fork
    kill
    f_globals f_locals f_back f_builtins gi_frame cr_frame tb_frame co_code
    save savez savez_compressed save_safetensors save_gguf load export_to_dot
    export_function import_function render
    operator attrgetter methodcaller format format_map vformat Formatter
    sympy sympify parse_expr parsing lambdify
    pkgutil resolve_name importlib import_module typing get_type_hints get_annotations
    ForwardRef singledispatch singledispatchmethod dataclasses make_dataclass types
    FunctionType CodeType LambdaType gc weakref logging dictConfig fileConfig timeit
    cProfile profile pydoc locate doctest pdb unittest mock linecache traceback warnings
    type super object ABCMeta EnumType EnumMeta iter_fields update_wrapper wraps
    bltns mpmath exec_
    """.split()  # noqa: SIM905 (one table, read as words)
)


def check_region(tree, line_of, module_names=frozenset()):
    """The problems of one region's syntax tree, as ``"line N: ..."`` strings.

    ``tree`` is the region parsed inside a wrapper function (whose own node
    is skipped); ``line_of(lineno)`` is the student's line number of a line
    of that parse; ``module_names`` are the names the file binds to modules
    (``ops``, ``math``...), whose attributes the region may not assign.
    """
    problems = []
    # what the region imports is a module (or a module's name) too
    module_names = module_names | {(a.asname or a.name).split(".")[0]
                                   for node in ast.walk(tree)
                                   if isinstance(node, (ast.Import, ast.ImportFrom))
                                   for a in node.names}

    def refuse(node, what):
        problems.append(f"line {line_of(node.lineno)}: {what}")

    for node in ast.walk(tree):
        if not hasattr(node, "lineno") or node is tree.body[0]:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _importable(alias.name):
                    refuse(node, f"'import {alias.name}': a task may import only mlxref's "
                                 f"modules and math")
        elif isinstance(node, ast.ImportFrom):
            name = node.module or ""
            if node.level == 0 and not _importable(name) or node.level and _TOOLING & set(
                    name.split(".")):
                refuse(node, f"'from {'.' * node.level}{name} import ...': a task may import "
                             f"only mlxref's modules and math")
            for alias in node.names:
                if alias.name == "*" or alias.name in _REFUSED_NAMES | _TOOLING or \
                        _private(alias.name):
                    refuse(node, f"'from {'.' * node.level}{name} import {alias.name}' "
                                 f"is not allowed in a task")
        elif isinstance(node, ast.Name):
            if node.id in _REFUSED_NAMES or _dunder(node.id):
                refuse(node, f"the name '{node.id}' is not allowed in a task")
        elif isinstance(node, ast.Attribute):
            if _refused_attribute(node.attr):
                refuse(node, _refused_attribute(node.attr))
            elif isinstance(node.ctx, (ast.Store, ast.Del)):
                root = node.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in module_names:
                    refuse(node, f"assigning to '{root.id}...{node.attr}' changes a module; "
                                 f"a task may not")
        elif isinstance(node, ast.AnnAssign) or isinstance(node, ast.arg) and node.annotation \
                or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns:
            # Library code evaluates a string annotation as Python (typing.get_type_hints).
            refuse(node, "a type annotation is not allowed in a task")
        elif isinstance(node, ast.Match):
            # A class pattern's positional parts read the attributes its class's
            # __match_args__ names, built at run time: a third red team read
            # __globals__ this way. No task needs a match statement.
            refuse(node, "a match statement is not allowed in a task")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            kind = "global" if isinstance(node, ast.Global) else "nonlocal"
            refuse(node, f"'{kind} {', '.join(node.names)}' is not allowed in a task")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "__" in node.value:
                refuse(node, "a string with '__' in it (a dunder name) is not allowed in a task")
        elif isinstance(node, ast.alias) and (node.asname and _dunder(node.asname)):
            refuse(node, f"the name '{node.asname}' is not allowed in a task")
        # Names that are plain strings in the tree, not Name or Attribute nodes. A
        # match pattern's keywords read attributes (``case object(tb_frame=f)``), as
        # ``.attr`` does; the names a definition, an argument or a pattern binds may
        # be anything a task needs (a method ``eval``), but not a dunder.
        if isinstance(node, ast.MatchClass):
            for name in node.kwd_attrs:
                if _refused_attribute(name):
                    refuse(node, _refused_attribute(name))
        for name in _bound_names(node):
            if _dunder(name):
                refuse(node, f"the name '{name}' is not allowed in a task")
    return problems


def _bound_names(node):
    """The names a node binds or passes as plain strings (not as Name nodes)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.arg, ast.keyword)):
        return [node.arg] if node.arg else []
    if isinstance(node, (ast.MatchAs, ast.MatchStar, ast.ExceptHandler)):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    return []


# mlxref's tooling, which graded code has no use for: the grader's own modules
# (its judge answers the calls in the child), the command line, the launcher,
# the alias of mlx, the manual and real MLX's back-end (each imports argparse,
# subprocess or MLX)
_TOOLING = frozenset(("course", "cli", "launch", "as_mlx", "manual", "backends"))


def _importable(name):
    parts = name.split(".")
    return name in _ALLOWED_IMPORTS or parts[0] == "mlxref" and not _TOOLING & set(parts)


def _dunder(name):
    return name.startswith("__") and name.endswith("__")


def _private(name):
    return name.startswith("_")


def _refused_attribute(name):
    """Why reading the attribute ``name`` is refused (``.name``, or a ``match``
    pattern's keyword, which reads it too), or None."""
    if name in _REFUSED_NAMES | _TOOLING or _dunder(name):
        return f"the attribute '.{name}' is not allowed in a task"
    if _private(name):
        # A module's private names lead where its public ones do not: red teams
        # reached sys, then ctypes, through argparse's and collections' ``_sys``.
        return (f"the attribute '.{name}' is private (it starts with '_'): a task may "
                f"use only public attributes")
    return None


def module_names(tree):
    """The names a module binds to modules at its top level (``import x``,
    ``from . import ops``)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


# --- 2. the packages the child may import ---------------------------------------------

# The distributions graded code needs, with their requirements (found at run time).
NEEDED = ("sympy", "numpy", "graphviz")
_NEVER = ("mlx", "mlxref", "mlx_cpu", "mlx_metal")


def site_packages(directory):
    """Fill ``directory`` with links to the top-level modules of ``NEEDED`` and
    their requirements; returns the names linked. Nothing else from the
    grader's environment (no ``mlx``, no ``mlxref``, no metadata) is there."""
    from importlib import metadata  # the grader's side only

    os.makedirs(directory, exist_ok=True)
    seen, todo, linked = set(), list(NEEDED), []
    while todo:
        name = todo.pop()
        key = name.lower().replace("-", "_")
        if key in seen or key in _NEVER:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for requirement in dist.requires or ():
            if "extra ==" in requirement:
                continue
            todo.append(_requirement_name(requirement))
        for top in _top_levels(dist):
            source = os.path.join(str(dist.locate_file("")), top)
            target = os.path.join(directory, top)
            if top.split(".")[0] in _NEVER or not os.path.exists(source):
                continue
            if not os.path.lexists(target):
                os.symlink(source, target)
                linked.append(top)
    return sorted(linked)


def _requirement_name(requirement):
    name = requirement.split(";")[0].strip()
    for stop in "<>=!~[( ":
        name = name.split(stop)[0]
    return name


def _top_levels(dist):
    """The file and directory names a distribution puts at the top of site-packages
    (the first part of each path in its RECORD)."""
    tops = set()
    for row in (dist.read_text("RECORD") or "").splitlines():
        path = row.rsplit(",", 2)[0].strip('"')
        top, _, rest = path.partition("/")
        if not top or top in ("..", "__pycache__") or top.endswith(
            (".dist-info", ".egg-info", ".pth", ".data")
        ):
            continue
        if not rest and not top.endswith((".py", ".so")):
            continue
        tops.add(top)
    return tops


# --- 3. the child process -------------------------------------------------------------

# The limits of a task's run, each enforced whatever the graded code does:
PROCESSES = 64  # processes at once, the child included: the supervisor counts them in
#   /proc every 50 ms and stops the run above it (RLIMIT_NPROC counts every process
#   of the user, and root ignores it: it is set too, as a backstop, for other users)
OPEN_FILES = 256  # open file descriptors per process (RLIMIT_NOFILE)
FILE_SIZE = 64 << 20  # bytes one file may grow to (RLIMIT_FSIZE: writes past it fail)
DISK_LIMIT = 256 << 20  # bytes the task's directory may grow by in all (checked every
#   0.5 s and at the end; the run is stopped above it)
OUTPUT_LIMIT = 8 << 20  # bytes of stdout and stderr together; the parent keeps at most
#   this much of the results and 64 KiB of stderr, and stops the run above it

# The statuses ``run`` returns when a limit stopped the run.
TIMED_OUT = 124  # the wall-clock limit
TOO_MANY_PROCESSES = 125  # PROCESSES
DISK_FULL = 126  # DISK_LIMIT
TOO_MUCH_OUTPUT = 127  # OUTPUT_LIMIT


def python():
    """The interpreter for the child: the base one, not a virtual environment's
    (its path would name the environment, often inside the instructor's
    checkout; with ``-S`` the environment is not used anyway)."""
    base = getattr(sys, "_base_executable", None)
    if base and os.path.isfile(base) and os.access(base, os.X_OK):
        return base
    return sys.executable


def clean_environment(scratch):
    """The child's whole environment: nothing from the grader's."""
    home, tmp = os.path.join(scratch, "home"), os.path.join(scratch, "tmp")
    for d in (home, tmp):
        os.makedirs(d, exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def run(argv, env, cwd, stdin, timeout, cpu=None, memory=None, watch=None, feed=None):
    """Run ``argv`` under the supervisor with the limits above. Returns
    ``(status, stdout, stderr)``: ``status`` is the child's exit status (at
    most 123), ``-signal`` if a signal ended it, or ``TIMED_OUT``,
    ``TOO_MANY_PROCESSES``, ``DISK_FULL`` or ``TOO_MUCH_OUTPUT`` when that
    limit stopped it. ``stdout`` is at most ``OUTPUT_LIMIT`` bytes, ``stderr``
    its last 64 KiB: the output is read as it comes and the rest dropped, so
    no run can fill this process's memory. ``watch`` is the directory whose
    growth ``DISK_LIMIT`` bounds. Every process the child started is dead
    when this returns.

    With ``feed``, the child's stdin stays open after ``stdin``: each whole
    line of its stdout is handed to ``feed``, and the text ``feed`` returns
    (if any) is written to the child next, so that it learns one thing only
    after it has answered another; an empty text closes its stdin."""
    config = {"argv": argv, "env": env, "cwd": cwd, "timeout": timeout, "cpu": cpu,
              "memory": memory, "watch": watch, "processes": PROCESSES,
              "open_files": OPEN_FILES, "file_size": FILE_SIZE, "disk": DISK_LIMIT,
              # bubblewrap (``isolated``) exits with 128 + n when signal n ended its child
              "shell_status": os.path.basename(argv[0]) == "bwrap"}
    supervisor = subprocess.Popen(
        # The supervisor's source as -c, not its path: no process of the run
        # names a file of the instructor's checkout.
        [python(), "-I", "-S", "-c", _source(), json.dumps(config)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=cwd, env=env, start_new_session=True,
    )
    def send(text, close):
        try:  # a few kilobytes: the pipe holds them until the child reads
            supervisor.stdin.write(text.encode())
            supervisor.stdin.flush()
            if close:
                supervisor.stdin.close()
        except (OSError, ValueError):  # the child is gone: its status says why
            pass

    send(stdin, feed is None)
    pending = b""
    out, err, total, flooded = bytearray(), bytearray(), 0, False
    deadline, killed = time.monotonic() + timeout + 30, False
    with selectors.DefaultSelector() as pipes:
        pipes.register(supervisor.stdout, selectors.EVENT_READ)
        pipes.register(supervisor.stderr, selectors.EVENT_READ)
        while pipes.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                if killed:  # a process outside the group holds the pipes: stop reading
                    break
                _kill_group(supervisor.pid)  # the supervisor itself hung
                deadline, killed = time.monotonic() + 5, True
                continue
            for key, _ in pipes.select(timeout=min(left, 1.0)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    pipes.unregister(key.fileobj)
                    continue
                total += len(chunk)
                if key.fileobj is supervisor.stdout:
                    out += chunk[: max(0, OUTPUT_LIMIT - len(out))]
                    if feed is not None and not flooded:
                        *lines, pending = (pending + chunk).split(b"\n")
                        pending = pending[-OUTPUT_LIMIT:]
                        for line in lines:
                            more = feed(line.decode("utf-8", "replace"))
                            if more is not None and not supervisor.stdin.closed:
                                send(more, more == "")
                else:
                    err = (err + chunk)[-65536:]
                if total > OUTPUT_LIMIT and not flooded:
                    flooded = True  # the supervisor kills the run and its processes
                    supervisor.send_signal(signal.SIGTERM)
    supervisor.stdout.close()
    supervisor.stderr.close()
    if not supervisor.stdin.closed:
        try:
            supervisor.stdin.close()
        except OSError:
            pass
    try:
        status = supervisor.wait(timeout=10)
    except subprocess.TimeoutExpired:
        _kill_group(supervisor.pid)
        status = supervisor.wait()
    if flooded:
        status = TOO_MUCH_OUTPUT
    elif status < 0:  # the supervisor itself was killed
        status = TIMED_OUT if killed else status
    elif status >= _SIGNALLED:
        status = -(status - _SIGNALLED)
    return status, bytes(out).decode("utf-8", "replace"), bytes(err).decode(
        "utf-8", "replace")


# The supervisor's exit status: the child's (at most 123), 128 + n if signal n
# ended it, or one of the limits' statuses above.
_SIGNALLED = 128


def _source():
    with open(__file__, encoding="utf-8") as f:
        return f.read()


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _subreaper():
    """Become a child subreaper (Linux): orphans of our descendants become ours."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _die_with_parent(signum=signal.SIGKILL):
    """Linux: this process gets ``signum`` when its parent dies."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signum, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _reap_all():
    """Kill and reap every process left under this one (orphans adopted as
    subreaper), a fork bomb's included: each round kills the whole tree."""
    for _ in range(1000):
        below = _descendants(os.getpid())
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
        if not below and not _descendants(os.getpid()):
            return
        time.sleep(0.01)


def _processes_of(user):
    """How many processes ``user`` runs now (from /proc; 0 where there is none)."""
    count = 0
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            if entry.isdigit() and os.stat("/proc/" + entry).st_uid == user:
                count += 1
        except OSError:
            pass
    return count


def _limits(config):
    processes = _processes_of(os.getuid()) + config["processes"]

    def apply():
        import resource

        os.setsid()
        _die_with_parent()
        limits = [(resource.RLIMIT_FSIZE, config["file_size"]), (resource.RLIMIT_CORE, 0),
                  (resource.RLIMIT_NOFILE, config["open_files"]),
                  (resource.RLIMIT_NPROC, processes)]
        if config["cpu"]:
            limits.append((resource.RLIMIT_CPU, int(config["cpu"])))
        if config["memory"]:
            limits.append((resource.RLIMIT_AS, int(config["memory"])))
        for kind, value in limits:
            try:  # macOS refuses some (RLIMIT_AS); the wall-clock limit still holds
                resource.setrlimit(kind, (value, value + 1 if kind == resource.RLIMIT_CPU
                                          else value))
            except (ValueError, OSError):
                pass

    return apply


def _descendants(pid):
    """The pids below ``pid`` in the process tree (from /proc)."""
    parents = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _size(directory):
    """The bytes of the files under ``directory`` (links not followed)."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


class _Stop(Exception):
    """SIGTERM from the parent: it read more output than OUTPUT_LIMIT."""


def _stop(signum, frame):
    raise _Stop


def _supervise(config):
    """The supervisor: start the child in a session of its own with the limits,
    watch it (wall clock, processes, disk) until it ends or a limit or the
    parent's SIGTERM stops it, then kill its group and every process it left
    behind. Exits with the child's status (see ``run``)."""
    _subreaper()
    signal.signal(signal.SIGTERM, _stop)
    parent = os.getppid()
    _die_with_parent(signal.SIGTERM)  # a killed grader stops its runs, as its SIGTERM does
    if os.getppid() != parent:  # it died before that took hold
        return TIMED_OUT
    watch, status, stopped, child = config["watch"], None, None, None
    base = _size(watch) if watch else 0
    try:
        child = subprocess.Popen(config["argv"], env=config["env"], cwd=config["cwd"],
                                 # The supervisor runs no threads: preexec_fn is safe here.
                                 preexec_fn=_limits(config))  # noqa: PLW1509
        os.close(0)  # the child has the token on its stdin; nothing for us there
        start = last = time.monotonic()
        while status is None and stopped is None:
            try:
                status = child.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if now - start > config["timeout"]:
                stopped = TIMED_OUT
            elif len(_descendants(os.getpid())) > config["processes"]:
                stopped = TOO_MANY_PROCESSES
            elif watch and now - last > 0.5:
                last = now
                if _size(watch) - base > config["disk"]:
                    stopped = DISK_FULL
    except _Stop:
        stopped = TOO_MUCH_OUTPUT
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if child is None:
        return stopped
    _kill_group(child.pid)
    if status is None:
        status = child.wait()
    _reap_all()
    if stopped is None and watch and _size(watch) - base > config["disk"]:
        stopped = DISK_FULL
    if stopped is not None:
        return stopped
    if config["shell_status"] and _SIGNALLED < status < _SIGNALLED + 65:
        status = _SIGNALLED - status
    return _SIGNALLED - status if status < 0 else min(status, 123)


# --- 4. OS isolation: bubblewrap ---------------------------------------------------------

# The child's private /tmp, a tmpfs of this many bytes.
TMP_SIZE = 256 << 20

# Where bubblewrap comes from, for the one line that says it is missing.
BWRAP_INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; or make bwrap)"

_ISOLATION = []  # the probe's answer, found once per process


def isolation():
    """``None`` when bubblewrap can isolate a child on this machine; otherwise one
    line saying why not and what to install. Probed once: a ``true`` run in new
    namespaces (a container may forbid them even where ``bwrap`` is installed)."""
    if not _ISOLATION:
        _ISOLATION.append(_probe())
    return _ISOLATION[0]


def _probe():
    if not sys.platform.startswith("linux"):
        return f"{sys.platform} has no bubblewrap: the child runs without OS isolation"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"bubblewrap is not installed: {BWRAP_INSTALL}"
    try:
        probe = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not run: {exc}"
    if probe.returncode != 0:
        why = probe.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        return f"bubblewrap cannot make namespaces here: {why[0][:200]}"
    return None


# What every Python child needs to see, read-only, besides its interpreter: the
# programs and libraries of the system, and the files the dynamic loader and
# Python read at start-up. Paths missing on a system are skipped.
_SYSTEM = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache",
           "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives")


def isolated(argv, work, readable, tmp_size=TMP_SIZE, frozen=()):
    """``argv`` run by bubblewrap in a view of exactly what the child needs.

    New namespaces for everything (no network, its own process tree, so no
    other process's /proc); the system's programs and libraries and the
    interpreter's standard library read-only; the packages in ``readable``
    read-only; ``work``, the task's own directory, the one place it may write;
    a private /tmp of ``tmp_size`` bytes; a minimal /dev. The directories in
    ``frozen``, inside ``work``, are read-only again (the copy's sources and
    their compiled files: a compiled file written by graded code would be
    imported in place of its source). Nothing else exists
    in its view: not the instructor's checkout, not the submission, not the
    other tasks' copies, not the interpreter's own site-packages (where real
    MLX may be installed), not the grader's home."""
    prefix = os.path.realpath(sys.base_prefix)
    stdlib = os.path.join(prefix, "lib", "python%d.%d" % sys.version_info[:2])
    command = [shutil.which("bwrap"), "--die-with-parent", "--new-session", "--unshare-all",
               "--dev", "/dev", "--proc", "/proc",
               "--size", str(int(tmp_size)), "--tmpfs", "/tmp"]
    for path in _SYSTEM:
        command += ["--ro-bind-try", path, path]
    command += ["--ro-bind", prefix, prefix]
    # The interpreter's own packages are not the child's (it runs with -S):
    # an empty, read-only directory in their place.
    site = os.path.join(stdlib, "site-packages")
    if os.path.isdir(site):
        command += ["--tmpfs", site, "--remount-ro", site]
    for path in readable:  # where the links point, which may itself be a link
        command += ["--ro-bind", os.path.realpath(path), os.path.abspath(path)]
    work = os.path.realpath(work)
    command += ["--bind", work, work]
    for path in frozen:
        path = os.path.realpath(path)
        command += ["--ro-bind", path, path]
    return command + ["--"] + list(argv)  # the child starts where the caller's cwd is


# --- the child: answer one task's calls ---------------------------------------------------

# The child's program, run as ``python -I -S -c CHILD`` in the scratch copy.
# Before any graded code runs it reads the token and its configuration from
# stdin, keeps a private duplicate of stdout for its answer lines (fd 1 then
# goes to stderr, so a print can never reach the parent's channel), sets
# ``sys.path`` to the copy and the linked packages, and refuses ``mlx`` at
# import. Each answer is one line ``TOKEN {json}``; the last line says the
# run is done.
CHILD = r"""
import json, linecache, os, sys

TOKEN = sys.stdin.readline().strip()
CONFIG = json.loads(sys.stdin.readline())
_out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)
sys.path[:0] = [CONFIG["src"], os.path.join(CONFIG["src"], "tests"), CONFIG["site"]]


def _no_parsing(*args, **kwargs):
    raise ValueError("the grader does not let graded code parse text with SymPy")


class _Unparsing:
    # SymPy's parser evaluates text as Python (sympy.exp("...") reaches it): its
    # module loads without it, when it is first imported (SymPy is a third of a
    # second to import, which a child that needs none of it does not pay).
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        module.parse_expr = module.eval_expr = _no_parsing


class _Refused:
    # A meta-path finder, first in line: graded code never imports these, and
    # imports SymPy's parser without its parsing.
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in CONFIG["blocked"]:
            raise ModuleNotFoundError(
                "No module named %r (the grader does not let graded code import it)" % name,
                name=name)
        if name == "sympy.parsing.sympy_parser":
            for finder in sys.meta_path[1:]:
                spec = getattr(finder, "find_spec", lambda *a: None)(name, path, target)
                if spec is not None:
                    spec.loader = _Unparsing(spec.loader)
                    return spec
        return None


sys.meta_path.insert(0, _Refused())

import ctypes  # loaded before the audit hook: importing it opens the C library (SymPy does)

# mlxref's calls of the C library's float functions (mlxref/core/backend/cpu/libm.py,
# which imports nothing of mlxref) load before the audit hook, which refuses ctypes, so
# graded code computes log as every other run of mlxref does.
import importlib.util as _util

_spec = _util.spec_from_file_location(
    "mlxref.core.backend.cpu.libm",
    os.path.join(CONFIG["src"], "mlxref", "core", "backend", "cpu", "libm.py"))
if _spec is not None and os.path.exists(_spec.origin):
    sys.modules[_spec.name] = _util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_spec.name])
del _util, _spec

# An audit hook (PEP 578), which nothing can remove: graded code may write,
# delete or rename only in this task's tmp/ and home/, may not read the
# instructor's checkout or the submission (only the linked packages inside
# them), nor the other tasks' copies beside this one, nor another process's
# /proc entries, and may not start processes, send signals, open sockets or
# use ctypes.
_WORK = os.path.realpath(CONFIG["work"])
_READ = [os.path.realpath(p) for p in CONFIG["readable"]] + [_WORK]
_DENY = [os.path.realpath(p) for p in CONFIG["deny"]]
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_PATH_EVENTS = frozenset(
    "os.remove os.rename os.rmdir os.mkdir os.chmod os.chown os.truncate os.link os.symlink "
    "os.utime os.chflags os.lchflags os.setxattr os.removexattr shutil.rmtree".split())
_PROCESS_EVENTS = frozenset(
    "subprocess.Popen os.system os.exec os.posix_spawn os.spawn os.fork os.forkpty os.kill "
    "os.killpg pty.spawn os.startfile socket.connect socket.bind socket.sendto "
    "socket.sendmsg socket.getaddrinfo".split())


def _under(path, roots):
    return any(path == r or path.startswith(r + os.sep) for r in roots)


def _resolved(path):
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return os.path.realpath(path) if isinstance(path, str) else None


_SCRATCH = [os.path.join(_WORK, "tmp"), os.path.join(_WORK, "home"), os.devnull]


def _writable(path):
    # The task's own temporary and home directories: not the copy's sources,
    # test data or compiled files (a compiled file written by graded code is
    # imported in place of its source; the copy's are the reference's).
    return _under(path, _SCRATCH)


def _other_process(path):
    # /proc/PID/... of any process but this one (the grader's memory, say)
    parts = path.split(os.sep)
    return len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and \
        int(parts[2]) != os.getpid()


def _audit(event, args):
    if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
        # A function's code swapped (this hook's, a red team did): refused outright.
        raise PermissionError("the grader does not let graded code replace a function's code")
    if event == "open":
        path, mode, flags = args
        where = _resolved(path)
        if where is None:
            return
        writing = (isinstance(flags, int) and flags & _WRITE_FLAGS) or (
            isinstance(mode, str) and any(c in mode for c in "wax+"))
        if writing and not _writable(where):
            raise PermissionError("the grader does not let graded code write %s" % path)
        if _under(where, _DENY) and not _under(where, _READ) or _other_process(where):
            raise PermissionError("the grader does not let graded code read %s" % path)
    elif event in _PATH_EVENTS:
        for arg in args:
            where = _resolved(arg) if isinstance(arg, (str, bytes, os.PathLike)) else None
            if where is not None and not _writable(where):
                raise PermissionError("the grader does not let graded code change %s (%s)"
                                      % (arg, event))
    elif event in _PROCESS_EVENTS or event.startswith("ctypes."):
        raise PermissionError("the grader does not let graded code use %s" % event)


sys.addaudithook(_audit)


def _emit(record):
    _out.write(TOKEN + " " + json.dumps(record) + "\n")


def _finish(status):
    module = sys.modules.get("mlxref")
    _emit({"done": True, "status": int(status), "mlxref": getattr(module, "__file__", None)})
    _out.close()
    sys.stderr.flush()
    os._exit(0)


def _region_of(filename, lineno):
    for r in CONFIG["regions"]:
        if filename == r["file"] and r["first"] <= lineno <= r["last"]:
            return r
    return None


def _relative(filename):
    src = CONFIG["src"] + os.sep
    return filename[len(src):] if filename.startswith(src) else os.path.basename(filename)


def _where(exc):
    # The student's lines an exception passed through, at their own line
    # numbers: the stub's line when it is the stub's NotImplementedError.
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    if not frames:
        return {}
    last, lineno = frames[-1]
    stub = _region_of(last.co_filename, lineno)
    if isinstance(exc, NotImplementedError) and str(exc).startswith("Task ") and stub:
        return {"stub": [stub["path"], stub["student_first"] + lineno - stub["first"]]}
    where = []
    for code, n in frames:
        r = _region_of(code.co_filename, n)
        if r is not None:
            where.append([r["path"], r["student_first"] + n - r["first"], code.co_name,
                          linecache.getline(code.co_filename, n).strip()[:300]])
    inside = None
    if _region_of(last.co_filename, lineno) is None:
        inside = [last.co_name, _relative(last.co_filename)]
    return {"where": where[-50:], "inside": inside}


# The tests' calls (mlxref/course/judge.py), one line of stdin each, the next
# sent only once this one is answered: each one's result as data, in order;
# the judge, in the grader's process, compares them.
from mlxref.course import judge as _judge

# Which tasks' regions each call ran: the grader holds a call that ran a task
# its reference's run did not to the whole submission.
_entered = _judge.Entered({(os.path.join(CONFIG["src"], p), q): t
                           for p, q, t in CONFIG["functions"]})

# The copy's mlxref.core, which every call's data needs, imported once here,
# outside that watch (whose profile hook doubles an import's cost): importing
# it runs no task's code, as a copy with every task stubbed imports. Should it
# fail, the first call imports it again and answers with the error.
try:
    import mlxref.core  # noqa: F401
except Exception:  # noqa: BLE001 (the first call's answer says why)
    pass

for _k in range(CONFIG["calls"]):
    _line = sys.stdin.readline()
    if not _line:
        break
    _entered.watch()
    _result = _judge.answer(json.loads(_line), _where)
    _emit({"answer": _k, "result": _result, "entered": _entered.unwatch()})
_finish(0)
"""


if __name__ == "__main__":
    sys.exit(_supervise(json.loads(sys.argv[1])))
