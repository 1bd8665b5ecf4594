"""The ring back-end: ranks in a circle over TCP, each talking to its two neighbours.

Read alongside: mlx/distributed/ring/ring.cpp (``RingGroup``, ``init``,
``load_nodes``, ``accept_connections``/``make_connections``) and
mlx/distributed/utils.cpp (``TCPSocket::connect``'s retries).

The hostfile (``MLX_HOSTFILE``) is JSON: one list of ``"ip:port"`` strings per
rank. Rank ``r`` listens on its own addresses and accepts one connection on
each from its left neighbour ``r - 1``, and connects to each address of its
right neighbour ``r + 1`` (the last rank connects first, so the circle closes).
Several addresses per rank give several sockets per neighbour, and MLX spreads
big collectives over them.

``all_sum``/``all_max``/``all_min`` are MLX's ring all-reduce: the list is cut
into ``size`` segments; in ``size - 1`` steps each rank sends one segment on
and reduces the one it receives into its own (reduce-scatter), after which each
rank holds one segment fully reduced; ``size - 1`` more steps pass the reduced
segments round (all-gather). Segments travel in packets of at most
``ALL_SUM_SIZE`` bytes. So segment ``s`` is reduced in the order the ring
visits the ranks: starting at rank ``s`` and moving against the direction of
travel, ``x[s+1] + x[s]``, then ``x[s+2] + (...)``, ..., which is what decides
a float sum's bits, and every rank ends with the same bits.

MLX runs the parts of a big collective (one per socket and direction) on a
thread pool, and keeps one packet in flight while it reduces the previous one.
Each part uses its own socket direction and the bytes each socket carries do not
depend on timing, so running the parts one after another, each step's send and
receive together, sends the same bytes and computes the same results.

Faults never hang: every wait on a socket gives up after ``MLXREF_RING_TIMEOUT``
seconds without progress (default 600), a closed connection or a malformed
message (wire.py) raises at once, and the group then closes its sockets, so its
neighbours learn of the failure at once too and pass it round the ring.

Read next: wire.py (the messages and the reductions); mlxref/launch.py starts
the ranks.
"""

import json
import os
import selectors
import socket
import sys
import time

from .wire import HEADER, REDUCE_OPS, frame, from_wire, read_header, to_wire

from .distributed import GroupImpl

ALL_SUM_SIZE = 8 * 1024 * 1024  # bytes per packet at most
ALL_SUM_BUFFERS = 2
MIN_SEND_SIZE = 262144  # bytes per part below which a collective is not split
CONN_ATTEMPTS = 5
CONN_WAIT = 1000  # ms before the second attempt, doubling after each
RING_TAG = "[ring]"
TIMEOUT_VARIABLE = "MLXREF_RING_TIMEOUT"
# A peer that died is known at once (its connections close); this bounds the
# wait on one that is alive but sends nothing. A rank may compute for minutes
# between two collectives (MLX's ring test builds 4M-element arrays in pure
# Python on 4 ranks of 2 cores), so the default is long.
DEFAULT_TIMEOUT = 600.0
# Connecting waits at most this long (or the timeout above, if shorter): the
# ranks start at about the same time, and a peer that never starts must not
# keep the others for ten minutes.
CONNECT_TIMEOUT = 60.0


def timeout_seconds():
    """How long any wait on a peer may last (``MLXREF_RING_TIMEOUT``, seconds)."""
    value = os.environ.get(TIMEOUT_VARIABLE, "")
    try:
        seconds = float(value) if value else DEFAULT_TIMEOUT
    except ValueError:
        raise RuntimeError(f"{RING_TAG} {TIMEOUT_VARIABLE} should be a number of seconds "
                           f"but is {value!r}") from None
    if not seconds > 0:
        raise RuntimeError(f"{RING_TAG} {TIMEOUT_VARIABLE} should be positive but is {value!r}")
    return seconds


def log_info(verbose, *args):
    if verbose:
        print(RING_TAG, *args, file=sys.stderr, flush=True)


def ceildiv(a, b):
    return (a + b - 1) // b


# --- the hostfile and the connections ---------------------------------------------------


def parse_address(ip_port):
    """``"ip:port"`` -> (host, port), as utils.cpp's ``parse_address`` (MLX's message)."""
    ip, colon, port = ip_port.partition(":")
    if not colon:
        raise RuntimeError(f"Can't parse address {ip_port}")
    try:
        return socket.getaddrinfo(ip, port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
    except (socket.gaierror, UnicodeError):
        raise RuntimeError(f"Can't parse address {ip}:{port}") from None


def load_nodes(hostfile):
    """The addresses of every rank, in rank order, from the JSON hostfile."""
    try:
        with open(hostfile, encoding="utf-8") as f:
            hosts = json.load(f)
    except OSError as e:
        raise RuntimeError(f"{RING_TAG} Couldn't read the hostfile {hostfile} "
                           f"({e.strerror})") from None
    except ValueError as e:
        raise RuntimeError(f"{RING_TAG} The hostfile {hostfile} is not valid JSON ({e})") from None
    if not (isinstance(hosts, list) and all(
            isinstance(h, list) and all(isinstance(ip, str) for ip in h) for h in hosts)):
        raise RuntimeError(f"{RING_TAG} The hostfile {hostfile} should hold a list with one "
                           f'list of "ip:port" strings per rank but holds {json.dumps(hosts)}')
    return [[parse_address(ip) for ip in h] for h in hosts]


def accept_connections(addresses, left, timeout):
    """Listen on each of this rank's addresses and accept one connection on each."""
    sockets = []
    for address in addresses:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            # As MLX: a job can start again at once on the ports its last run used.
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                server.bind(address)
                server.listen(1)
            except OSError as e:
                raise RuntimeError(f"{RING_TAG} Couldn't listen on {_show(address)} "
                                   f"({e.strerror})") from None
            server.settimeout(timeout)
            try:
                sock, _ = server.accept()
            except socket.timeout:
                raise RuntimeError(
                    f"{RING_TAG} Accept failed: rank {left} (the left neighbour) did not "
                    f"connect to {_show(address)} within {timeout:g} s") from None
            sockets.append(sock)
    return sockets


def make_connections(addresses, right, timeout, verbose):
    """Connect to each of the right neighbour's addresses, retrying as
    ``TCPSocket::connect`` does (CONN_ATTEMPTS tries, the wait doubling from
    CONN_WAIT), within ``timeout`` seconds."""
    sockets = []
    for address in addresses:
        deadline = time.monotonic() + timeout
        wait = CONN_WAIT / 1000
        for attempt in range(CONN_ATTEMPTS):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            try:
                sock.connect(address)
                break
            except OSError as e:
                sock.close()
                error = e
            remaining = deadline - time.monotonic()
            if attempt == CONN_ATTEMPTS - 1 or remaining <= 0:
                raise RuntimeError(
                    f"{RING_TAG} Couldn't connect to rank {right} (the right neighbour) at "
                    f"{_show(address)} after {attempt + 1} attempts "
                    f"(error: {error.errno}, {error.strerror or 'timed out'})") from None
            log_info(verbose, "Attempt", attempt, "waiting", int(wait * 1000),
                     f"ms (error: {error.errno} )")
            time.sleep(min(wait, remaining))
            wait *= 2
        sockets.append(sock)
    return sockets


def _show(address):
    return f"{address[0]}:{address[1]}"


# --- the group ------------------------------------------------------------------------


class RingGroup(GroupImpl):
    """A group of ranks in a ring over TCP (ring.cpp's ``RingGroup``)."""

    # Called with the step's facts (keywords) after each step of an all-reduce,
    # when set on a group: the figure of the ring's steps (mlxref/viz/ring.py).
    observer = None
    # A group of the figure lowers it to show how a big array is split in two.
    min_send_size = MIN_SEND_SIZE

    def __init__(self, rank, nodes, verbose):
        if rank > 0 and rank >= len(nodes):
            raise RuntimeError(f"{RING_TAG} Rank cannot be larger than the size of the group")
        self._rank, self._size, self._verbose = rank, len(nodes), verbose
        self._timeout = timeout_seconds()
        connecting = min(self._timeout, CONNECT_TIMEOUT)
        self._broken = None  # the first transport error, once the ring is broken
        right, left = (rank + 1) % self._size, (rank - 1) % self._size

        # The order of connecting: every rank accepts first except the last one, which
        # connects first, so that the circle closes without a deadlock.
        if rank < right:
            log_info(verbose, "Rank", rank, "accepting")
            self._sockets_left = accept_connections(nodes[rank], left, connecting)
            log_info(verbose, "Rank", rank, "connecting to", right)
            self._sockets_right = make_connections(nodes[right], right, connecting, verbose)
        else:
            log_info(verbose, "Rank", rank, "connecting to", right)
            self._sockets_right = make_connections(nodes[right], right, connecting, verbose)
            log_info(verbose, "Rank", rank, "accepting")
            self._sockets_left = accept_connections(nodes[rank], left, connecting)

        if not self._sockets_right:
            raise RuntimeError(f"{RING_TAG} Rank {rank} has no sockets to the right.")
        if not self._sockets_left:
            raise RuntimeError(f"{RING_TAG} Rank {rank} has no sockets to the left.")
        if len(self._sockets_right) != len(self._sockets_left):
            raise RuntimeError(
                f"{RING_TAG} It is required to have as many connections to the left as to "
                f"the right but rank {rank} has {len(self._sockets_right)} connections to "
                f"the right and {len(self._sockets_left)} to the left.")
        self._peer = {}  # socket -> the neighbour's rank, for error messages
        for sock in self._sockets_right:
            self._peer[sock] = right
        for sock in self._sockets_left:
            self._peer[sock] = left
        for sock in self._peer:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def split(self, color, key=-1):
        raise RuntimeError(f"{RING_TAG} Group split not supported.")

    def sum_scatter(self, data, dtype):
        raise RuntimeError(f"{RING_TAG} sum_scatter not supported.")

    def close(self):
        """Close the sockets (as the destructor of MLX's group does)."""
        for sock in self._peer:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    # --- all-reduce ------------------------------------------------------------------

    def all_reduce(self, data, dtype, op):
        size = len(data)
        if size < self._size:
            # Too few elements for a segment per rank: reduce a copy padded with zeros.
            if dtype.size * self._size > 1024:
                raise RuntimeError(f"Can't perform the ring all reduce of {size} elements "
                                   f"with a ring of size {self._size}")
            buffer = list(data) + dtype.store([0] * (self._size - size))
            buffer = self._all_reduce_impl(buffer, dtype, op, self._sockets_right[0],
                                           self._sockets_left[0], -1, 0)
            return buffer[:size]

        # Split so that each part has at least MIN_SEND_SIZE bytes per segment: one part
        # per socket and direction at most (part i: sockets i // 2, direction +1 or -1).
        n_sockets = len(self._sockets_right) + len(self._sockets_left)
        n_reduces = max(min(n_sockets, size * dtype.size // (self._size * self.min_send_size)),
                        1)
        step = ceildiv(size, n_reduces)
        output = list(data)
        for i in range(n_reduces):
            start, stop = i * step, min(size, (i + 1) * step)
            output[start:stop] = self._all_reduce_impl(
                output[start:stop], dtype, op, self._sockets_right[i // 2],
                self._sockets_left[i // 2], -1 if i % 2 else 1, start)
        return output

    def _all_reduce_impl(self, data, dtype, op, socket_right, socket_left, direction, offset):
        """Reduce-scatter then all-gather of ``data`` round the ring in ``direction``
        (-1: send to the right, receive from the left); ``data`` starts at element
        ``offset`` of the whole list (for the observer)."""
        socket_send = socket_right if direction < 0 else socket_left
        socket_recv = socket_left if direction < 0 else socket_right
        data_size, size = len(data), self._size

        # ``size`` segments, each sent in packets of BUFFER_SIZE elements.
        segment_size = ceildiv(data_size, size)
        buffer_size = max(32768, min(ALL_SUM_SIZE // dtype.size, segment_size // 2))
        n_packets = ceildiv(segment_size, buffer_size)

        # The plan: which slice of ``data`` each step sends and which it receives, the
        # same steps twice (first reduce-scatter, then all-gather).
        send_segment, recv_segment = self._rank, (self._rank + direction) % size
        send_plan, recv_plan = [], []
        for _ in range(2):
            for _ in range(size - 1):
                send_start = send_segment * segment_size
                send_stop = min((send_segment + 1) * segment_size, data_size)
                recv_start = recv_segment * segment_size
                recv_stop = min((recv_segment + 1) * segment_size, data_size)
                for j in range(n_packets):
                    send_plan.append((min(send_start + j * buffer_size, send_stop),
                                      min(send_start + (j + 1) * buffer_size, send_stop)))
                    recv_plan.append((min(recv_start + j * buffer_size, recv_stop),
                                      min(recv_start + (j + 1) * buffer_size, recv_stop)))
                send_segment = (send_segment + direction) % size
                recv_segment = (recv_segment + direction) % size

        reduce_op = REDUCE_OPS[op]
        for i, ((s0, s1), (r0, r1)) in enumerate(zip(send_plan, recv_plan)):
            sent = data[s0:s1]
            [received] = self._transfer(op, [(socket_send, to_wire(sent, dtype))],
                                        [(socket_recv, (r1 - r0) * dtype.size)])
            received = from_wire(received, dtype, r1 - r0)
            scatter = 2 * i < len(send_plan)
            if scatter:  # reduce-scatter: reduce into our segment
                data[r0:r1] = reduce_op(received, data[r0:r1], dtype)
            else:  # all-gather: the segment arrives fully reduced
                data[r0:r1] = received
            if self.observer is not None:
                self.observer(
                    rank=self._rank, direction=direction, step=i,
                    phase="reduce-scatter" if scatter else "all-gather",
                    sent_to=self._peer[socket_send], sent=(offset + s0, offset + s1),
                    sent_values=sent, received_from=self._peer[socket_recv],
                    received=(offset + r0, offset + r1), received_values=received,
                    result=data[r0:r1])
        return data

    # --- all-gather, send, recv --------------------------------------------------------

    def all_gather(self, data, dtype):
        """Each rank's bytes passed round the ring, in as many parts as all-reduce uses."""
        raw = to_wire(data, dtype)
        nbytes, size = len(raw), self._size
        output = bytearray(nbytes * size)
        n_sockets = len(self._sockets_right) + len(self._sockets_left)
        n_gathers = max(min(n_sockets, nbytes // MIN_SEND_SIZE), 1)
        bytes_per_gather = ceildiv(nbytes, n_gathers)
        for i in range(n_gathers):
            offset = i * bytes_per_gather
            part = min(bytes_per_gather, nbytes - offset)
            direction = -1 if i % 2 else 1
            socket_right, socket_left = self._sockets_right[i // 2], self._sockets_left[i // 2]
            socket_send = socket_right if direction < 0 else socket_left
            socket_recv = socket_left if direction < 0 else socket_right
            start = self._rank * nbytes + offset
            output[start:start + part] = raw[offset:offset + part]
            send_segment, recv_segment = self._rank, (self._rank + direction) % size
            for _ in range(size - 1):
                start = send_segment * nbytes + offset
                [received] = self._transfer("all_gather",
                                            [(socket_send, bytes(output[start:start + part]))],
                                            [(socket_recv, part)])
                start = recv_segment * nbytes + offset
                output[start:start + part] = received
                send_segment = (send_segment + direction) % size
                recv_segment = (recv_segment + direction) % size
        return from_wire(bytes(output), dtype, len(data) * size)

    def _neighbour_sockets(self, peer, left_first):
        """The sockets to ``peer``, a neighbour (the left one first when
        ``left_first``: with two ranks, left == right); None for another rank."""
        sides = [(self._rank - 1) % self._size, (self._rank + 1) % self._size]
        sockets = [self._sockets_left, self._sockets_right]
        order = (0, 1) if left_first else (1, 0)
        return next((sockets[k] for k in order if sides[k] == peer), None)

    def send(self, data, dtype, dst):
        sockets = self._neighbour_sockets(dst, left_first=False)
        if sockets is None:
            raise RuntimeError(f"{RING_TAG} Send only supported to direct neighbors but "
                               f"tried to send to {dst} from {self._rank}\n")
        raw = to_wire(data, dtype)
        self._transfer("send", [(sock, raw[start:stop]) for sock, (start, stop)
                                in zip(sockets, self._pieces(len(raw), len(sockets)))], [])

    def recv(self, count, dtype, src):
        # The left neighbour first, so that with two ranks (left == right) a recv pairs
        # with the other rank's send to its right.
        sockets = self._neighbour_sockets(src, left_first=True)
        if sockets is None:
            raise RuntimeError(f"{RING_TAG} Recv only supported from direct neighbors but "
                               f"tried to recv from {src} to {self._rank}\n")
        pieces = self._pieces(count * dtype.size, len(sockets))
        received = self._transfer("recv", [], [(sock, stop - start) for sock, (start, stop)
                                               in zip(sockets, pieces)])
        return from_wire(b"".join(received), dtype, count)

    @staticmethod
    def _pieces(nbytes, n_sockets):
        """How send/recv spread ``nbytes`` over the sockets: slices of at least 1024 bytes."""
        segment_size = max(1024, ceildiv(nbytes, n_sockets))
        return [(start, min(nbytes, start + segment_size))
                for start in range(0, nbytes, segment_size)][:n_sockets]

    # --- moving bytes ---------------------------------------------------------------------

    def _transfer(self, op, sends, recvs):
        """Send each ``(socket, payload)`` and receive each ``(socket, nbytes)`` at the
        same time (as MLX's socket threads do); the received payloads, in order.

        Raises RuntimeError naming ``op`` and the peer when a peer closes its
        connection, sends a malformed message or makes no progress for the timeout;
        the group is then broken and closes its sockets."""
        if self._broken is not None:
            raise RuntimeError(f"{RING_TAG} {op} on a broken ring: {self._broken}")
        # Empty messages are not sent at all, as MLX completes them at once.
        outgoing = [[sock, frame(payload) + payload] for sock, payload in sends if payload]
        incoming = [[sock, n, bytearray(), False] for sock, n in recvs]  # header read yet?
        results = [b""] * len(incoming)
        selector = selectors.DefaultSelector()
        try:
            self._run(op, selector, outgoing, incoming, results)
        except RuntimeError as e:
            self._broken = str(e)
            self.close()
            raise
        finally:
            selector.close()
        return results

    def _run(self, op, selector, outgoing, incoming, results):
        pending_recvs = [(k, item) for k, item in enumerate(incoming) if item[1] > 0]
        pending_sends = list(outgoing)
        deadline = time.monotonic() + self._timeout
        while pending_sends or pending_recvs:
            events = {}
            for sock, _ in pending_sends:
                events[sock] = events.get(sock, 0) | selectors.EVENT_WRITE
            for _, (sock, *_) in pending_recvs:
                events[sock] = events.get(sock, 0) | selectors.EVENT_READ
            for sock, mask in events.items():
                selector.register(sock, mask)
            ready = selector.select(max(deadline - time.monotonic(), 0))
            for sock in events:
                selector.unregister(sock)
            if not ready:
                peers = sorted({self._peer[s] for s in events})
                raise RuntimeError(
                    f"{RING_TAG} {op} timed out: no progress with rank "
                    f"{' or '.join(map(str, peers))} for {self._timeout:g} s "
                    f"(set {TIMEOUT_VARIABLE} to wait longer)")
            deadline = time.monotonic() + self._timeout
            readable = {key.fileobj for key, mask in ready if mask & selectors.EVENT_READ}
            writable = {key.fileobj for key, mask in ready if mask & selectors.EVENT_WRITE}
            for item in pending_sends:
                if item[0] in writable:
                    writable.discard(item[0])  # one message per socket at a time, in order
                    item[1] = item[1][self._send_some(op, item[0], item[1]):]
            pending_sends = [item for item in pending_sends if item[1]]
            for k, item in pending_recvs:
                if item[0] in readable:
                    readable.discard(item[0])
                    if self._recv_some(op, item):
                        results[k] = bytes(item[2])
            pending_recvs = [(k, item) for k, item in pending_recvs if results[k] == b""]

    def _send_some(self, op, sock, payload):
        try:
            return sock.send(payload)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError as e:
            raise self._lost(op, sock, e.strerror) from None

    def _recv_some(self, op, item):
        """Read what has arrived for one message (its header, then its payload);
        True once it is complete."""
        sock, nbytes, got, header_done = item
        want = (nbytes if header_done else HEADER.size) - len(got)
        try:
            chunk = sock.recv(min(want, 1 << 20))
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as e:
            raise self._lost(op, sock, e.strerror) from None
        if not chunk:
            received = len(got) if header_done else 0
            raise self._lost(op, sock, f"closed after {received} of {nbytes} bytes")
        got += chunk
        if not header_done and len(got) == HEADER.size:
            try:
                read_header(bytes(got), nbytes)
            except ValueError as e:
                raise RuntimeError(f"{RING_TAG} {op}: {e} from rank {self._peer[sock]}") from None
            del got[:]
            item[3] = True
            return False
        return header_done and len(got) == nbytes

    def _lost(self, op, sock, what):
        return RuntimeError(f"{RING_TAG} connection to a peer was lost: rank {self._peer[sock]} "
                            f"during {op} ({what})")


def is_available():
    return True


def init(strict=False):
    """The ring group ``MLX_RANK`` and ``MLX_HOSTFILE`` describe, or None when they
    are not both set (``strict``: MLX's error). ``MLX_RING_VERBOSE`` logs the
    connections to stderr."""
    hostfile = os.environ.get("MLX_HOSTFILE")
    rank = os.environ.get("MLX_RANK")
    verbose = os.environ.get("MLX_RING_VERBOSE") is not None
    if hostfile is None or rank is None:
        if strict:
            raise RuntimeError(
                "[ring] You need to provide via environment variables both a rank (MLX_RANK) "
                f'and a hostfile (MLX_HOSTFILE) but provided MLX_RANK="{rank or ""}" and '
                f'MLX_HOSTFILE="{hostfile or ""}"')
        return None
    nodes = load_nodes(hostfile)
    return RingGroup(_atoi(rank), nodes, verbose)


def _atoi(text):
    """C's ``atoi``, as MLX reads MLX_RANK: the leading integer, or 0."""
    text = text.lstrip()
    sign = text[:1] if text[:1] in ("+", "-") else ""
    digits = text[len(sign):]
    n = len(digits) - len(digits.lstrip("0123456789"))
    return int(sign + digits[:n]) if n else 0
