"""``python -m mlxref.launch``: start the ranks of a distributed program, as ``mlx.launch``.

Read alongside: python/mlx/_distributed_utils/launch.py (``main``,
``launch_ring``, ``launch_mpi``, ``_launch_with_io``, ``RemoteProcess``) and
common.py (``Hostfile``) in MLX 0.32.

``-n N`` repeats each host (default ``127.0.0.1``) N times; ``--hosts a,b`` or
``--hostfile hosts.json`` (MLX's format: ``{"backend", "envs", "hosts": [{"ssh",
"ips"}]}`` or a bare list of hosts) name the machines. For the ring back-end the
launcher writes the JSON hostfile ring.py reads (one ``"ip:port"`` per rank and
connection) into a temporary file, and starts every rank with ``MLX_RANK``,
``MLX_HOSTFILE`` (and ``MLX_RING_VERBOSE`` under ``--verbose``). A rank on
``127.0.0.1`` runs locally, any other through ``ssh`` as MLX runs it. Local
ports come from the operating system unless ``--starting-port`` is given.

As MLX's launcher: the ranks' output is passed through unchanged (``--prefix``,
mlxref's own option, starts each line with ``[rank R] ``),
a rank that fails stops the others, each rank that did not end well gets a
``[WARN]`` line on stderr, and the launcher's own exit status is 0 (MLX's main
returns nothing). Ctrl-C (SIGINT) or SIGTERM stops every rank. Two
differences, both said here: a script given as a file runs with this Python
(MLX 0.32's launcher execs the command as given, so ``mlx.launch -n 2
script.py`` fails with "not found"), and one rank gets no hostfile (MLX writes
an empty one that its ring cannot parse), so it runs as a group of one.

Read next: mlxref/core/distributed/ring.py, what each rank's ``init`` does.
"""

import argparse
import ipaddress
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections import Counter

LOCAL = "127.0.0.1"
STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL when stopping a rank


def log(verbose, *args):
    if verbose:
        print("\033[32m[INFO]", *args, "\033[0m", file=sys.stderr, flush=True)


def log_warning(*args):
    print("\033[33m[WARN]", *args, "\033[0m", file=sys.stderr, flush=True)


def positive_number(x):
    x = int(x)
    if x <= 0:
        raise ValueError("Number should be positive")
    return x


# --- hosts (common.py's Hostfile) ---------------------------------------------------------


class Host:
    def __init__(self, rank, ssh_hostname, ips):
        self.rank, self.ssh_hostname, self.ips = rank, ssh_hostname, ips


def hosts_from_list(hostlist, repeats=1):
    """``--hosts a,b,c`` with each host repeated ``repeats`` times; an IP address is
    also the address the ring uses."""
    hosts = []
    for h in hostlist.split(","):
        if h == "":
            raise ValueError("Hostname cannot be empty")
        try:
            ipaddress.ip_address(h)
            ips = [h]
        except ValueError:
            ips = []
        for _ in range(repeats):
            hosts.append(Host(len(hosts), h, ips))
    return hosts, "", []


def hosts_from_file(hostfile):
    """The hosts, the back-end and the environment a JSON hostfile gives."""
    if not os.path.exists(hostfile):
        raise ValueError(f"Hostfile {hostfile} doesn't exist")
    try:
        with open(hostfile, encoding="utf-8") as f:
            data = json.load(f)
        backend, envs, hosts = "", [], []
        if isinstance(data, dict):
            backend, envs, hosts = data.get("backend", ""), data.get("envs", []), data["hosts"]
        elif isinstance(data, list):
            hosts = data
        hosts = [Host(i, h["ssh"], h.get("ips", [])) for i, h in enumerate(hosts)]
        return hosts, backend, envs
    except Exception as e:
        raise ValueError(f"Failed to parse hostfile {hostfile} ({e})") from e


def free_local_ports(n):
    """``n`` ports the operating system says are free now."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(n)]
    try:
        for s in sockets:
            s.bind((LOCAL, 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def ring_hostfile(hosts, connections_per_ip, starting_port):
    """ring.py's hostfile: for each rank, one ``ip:port`` per IP and connection."""
    n = sum(len(h.ips) for h in hosts) * connections_per_ip
    if starting_port is None and all(ip == LOCAL for h in hosts for ip in h.ips):
        ports = iter(free_local_ports(n))
    else:
        ports = iter(range(starting_port or 32323, (starting_port or 32323) + n))
    return [[f"{ip}:{next(ports)}" for ip in h.ips for _ in range(connections_per_ip)]
            for h in hosts]


# --- the ranks ------------------------------------------------------------------------


class Rank:
    """One rank's process: local, or through ssh (MLX's ``RemoteProcess``)."""

    def __init__(self, rank, host, python, cwd, env, command, files=None):
        """``files``: environment variables naming a file, as {name: (local path,
        content)}; a remote rank writes the content to a temporary file of its own."""
        self.rank = rank
        files = files or {}
        command = [python or sys.executable, *command] if _is_script(command) else command
        if host == LOCAL:
            if cwd is not None and not os.path.isdir(cwd):
                print("Failed to change directory to", cwd, file=sys.stderr, flush=True)
                cwd = None
            args = command
            env = {**env, **{name: path for name, (path, _) in files.items()}}
        else:  # the same environment, files and command on the remote host
            script = f"cd {shlex.quote(cwd or os.getcwd())} 2>/dev/null; "
            script += "".join(f"export {k}={shlex.quote(v)}; " for k, v in env.items())
            for name, (_, content) in files.items():
                script += f"fname=$(mktemp); echo {shlex.quote(content)} >$fname; "
                script += f"export {name}=$fname; "
            script += "exec " + shlex.join(command)
            args, cwd = ["ssh", "-tt", "-o", "LogLevel=QUIET", host, script], None
        # Its own session, so that stopping it stops whatever it started.
        self.process = subprocess.Popen(args, cwd=cwd, env={**os.environ, **env},
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, start_new_session=True)

    def stop(self):
        """SIGTERM to the rank's process group, SIGKILL if it is still there after
        STOP_GRACE seconds."""
        if self.process.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(STOP_GRACE)
                return
            except subprocess.TimeoutExpired:
                pass


def _is_script(command):
    """A file rather than a program on PATH: run it with Python."""
    return os.path.isfile(command[0]) and not os.access(command[0], os.X_OK)


def launch_with_io(ranks_args, verbose, prefix=False):
    """Start the ranks, pass their output through line by line (each line after
    ``[rank R] `` with ``prefix``), stop them all if one fails or the launcher
    is interrupted, and report how each ended."""
    stop = threading.Event()
    ranks = []

    def interrupted(signum, frame):
        stop.set()

    previous = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for args in ranks_args:
            ranks.append(Rank(*args))
        relay(ranks, stop, prefix)
    finally:
        for r in ranks:
            if stop.is_set():
                r.stop()
            r.process.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for r in ranks:
        code = r.process.returncode
        if code != 0:  # a rank stopped here shows its signal, -15, as under MLX
            log_warning(f"Node with rank {r.rank} exited with code {code}")
        else:
            log(verbose, f"Node with rank {r.rank} completed")


def relay(ranks, stop, prefix=False):
    """Copy the ranks' stdout and stderr to ours until every stream ends. Whole
    lines only (a rank's line never lands inside another's), and when a rank
    fails or ``stop`` is set, stop every rank."""
    selector = selectors.DefaultSelector()
    for r in ranks:
        tag = f"[rank {r.rank}] ".encode() if prefix else b""
        selector.register(r.process.stdout, selectors.EVENT_READ, [sys.stdout.buffer, b"", tag])
        selector.register(r.process.stderr, selectors.EVENT_READ, [sys.stderr.buffer, b"", tag])
    open_streams = 2 * len(ranks)
    while open_streams:
        for key, _ in selector.select(0.1):
            out, pending, tag = key.data
            data = os.read(key.fd, 8192)
            if not data:
                selector.unregister(key.fileobj)
                open_streams -= 1
                data, pending = pending, b""
            else:
                data, pending = pending + data, b""
                cut = data.rfind(b"\n") + 1
                data, pending = data[:cut], data[cut:]
            key.data[1] = pending
            if data:
                if tag:
                    data = b"".join(tag + line for line in data.splitlines(keepends=True))
                out.write(data)
                out.flush()
        if stop.is_set() or any(r.process.poll() not in (None, 0) for r in ranks):
            stop.set()
            for r in ranks:
                r.stop()
    selector.close()


def launch_ring(parser, hosts, args, command):
    if any(len(h.ips) == 0 for h in hosts):
        parser.error("The ring backend requires IPs to be provided instead of hostnames")
    env = dict(e.split("=", 1) if "=" in e else (e, "") for e in args.env)
    if args.verbose:
        env["MLX_RING_VERBOSE"] = "1"
    log(args.verbose, "Running", shlex.join(command))
    if len(hosts) == 1:
        launch_with_io([(0, hosts[0].ssh_hostname, args.python, args.cwd, env, command)],
                       args.verbose, args.prefix)
        return
    nodes = json.dumps(ring_hostfile(hosts, args.connections_per_ip, args.starting_port))
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="mlxref-ring-") as f:
        f.write(nodes)
        f.flush()
        files = {"MLX_HOSTFILE": (f.name, nodes)}
        launch_with_io([(h.rank, h.ssh_hostname, args.python, args.cwd,
                         {**env, "MLX_RANK": str(h.rank)}, command, files)
                        for h in hosts], args.verbose, args.prefix)


def unbuffered_output_options(mpirun):
    """``--output :raw`` (MLX's: do not line-buffer the ranks' output) where
    ``mpirun`` knows it: Open MPI 5 and later. Open MPI 4 (Debian 12, Ubuntu 24.04)
    refuses the option and passes output through unbuffered anyway."""
    try:
        version = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    match = re.search(r"\(Open MPI\) (\d+)\.", version)
    return ["--output", ":raw"] if match and int(match.group(1)) >= 5 else []


def launch_mpi(parser, hosts, args, command):
    """Run ``mpirun`` over the hosts, as MLX does."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        parser.error("The mpi backend needs mpirun, which is not on PATH "
                     "(install Open MPI or MPICH)")
    log(args.verbose, f"Using '{mpirun}'")
    with tempfile.NamedTemporaryFile(mode="w") as f:
        for h, n in Counter(h.ssh_hostname for h in hosts).items():
            print(f"{h} slots={n}", file=f)
        f.flush()
        if _is_script(command):
            command = [args.python or sys.executable, *command]
        cmd = [mpirun, *unbuffered_output_options(mpirun), *(["--tag-output"] if args.prefix else []),
               "--hostfile", f.name,
               *(["-cwd", args.cwd] if args.cwd else []),
               *sum((["-x", e] for e in args.env), []),
               *sum([shlex.split(arg) for arg in args.mpi_arg], []), "--", *command]
        log(args.verbose, "Running", " ".join(cmd))
        try:
            subprocess.run(cmd)
        except KeyboardInterrupt:
            pass


def make_parser():
    parser = argparse.ArgumentParser(prog="mlxref.launch",
                                     description="Launch an mlxref distributed program")
    parser.add_argument("--print-python", action="store_true",
                        help="Print the path to the current python executable and exit")
    parser.add_argument("--verbose", action="store_true", help="Print debug messages")
    parser.add_argument("--hosts", default=LOCAL, help="A comma separated list of hosts")
    parser.add_argument("--repeat-hosts", "-n", type=positive_number, default=1,
                        help="Repeat each host a given number of times")
    parser.add_argument("--hostfile", help="The file containing the hosts")
    parser.add_argument("--backend", help="Which distributed backend to launch (ring or mpi)")
    parser.add_argument("--env", action="append", default=[],
                        help="Set environment variables for the jobs")
    parser.add_argument("--mpi-arg", action="append", default=[],
                        help="Arguments to pass directly to mpirun")
    parser.add_argument("--connections-per-ip", default=1, type=int,
                        help="How many connections per ip to use for the ring backend")
    parser.add_argument("--starting-port", "-p", type=int, default=None,
                        help="For the ring backend listen on this port increasing by 1 per "
                        "rank and IP (default: free ports when every host is local)")
    parser.add_argument("--cwd", help="Set the working directory on each node")
    parser.add_argument("--python", default=None,
                        help="Run a script with this python interpreter")
    parser.add_argument("--prefix", action="store_true",
                        help="Start each line a rank prints with [rank R] (mlxref's own)")
    return parser


def main(argv=None):
    parser = make_parser()
    args, rest = parser.parse_known_args(argv)
    if args.print_python:
        print(args.python or sys.executable)
        return
    if len(rest) == 0:
        parser.error("No script is provided")
    if rest[0] == "--":
        rest.pop(0)
        if not rest:
            parser.error("No script is provided")
    try:
        if args.hostfile is not None:
            hosts, backend, envs = hosts_from_file(args.hostfile)
        else:
            hosts, backend, envs = hosts_from_list(args.hosts, args.repeat_hosts)
    except ValueError as e:
        parser.error(str(e))
    if not hosts:
        parser.error("The hostfile lists no hosts")
    if backend != "" and args.backend is None:
        args.backend = backend
    args.backend = args.backend or "ring"
    args.env = envs + args.env
    if args.backend == "ring":
        launch_ring(parser, hosts, args, rest)
    elif args.backend == "mpi":
        launch_mpi(parser, hosts, args, rest)
    else:
        parser.error("The backend should be one of {'ring', 'mpi'}")


if __name__ == "__main__":
    main()
