"""The ADB transport server: accepts host connections on loopback and multiplexes streams.

It does the CNXN/AUTH handshake, turns OPEN into a stream handed to a service callback
(run on its own thread), moves WRTE payloads with per-stream OKAY flow control and closes
streams with CLSE.  It knows nothing about shell commands, files or phones: the
``open_service`` callback decides what each destination means.  ``stop()`` drops every
connection at once, which is what a host sees when a phone is unplugged.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from phone.virtual.wire.adb_protocol import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_WRTE,
    AUTH_RSAPUBLICKEY,
    AUTH_SIGNATURE,
    AUTH_TOKEN,
    MAX_PAYLOAD,
    Message,
    read_message,
)

log = logging.getLogger(__name__)

#: How long a stream waits for the host to acknowledge a WRTE before giving up.
ACK_TIMEOUT_S = 30.0


class StreamClosed(ConnectionError):
    """The host closed the stream (or the whole connection went away)."""


class Stream:
    """One ADB stream (an OPENed service) as seen by the device side."""

    def __init__(self, transport: Transport, local_id: int, remote_id: int, destination: str):
        self.transport = transport
        self.local_id = local_id
        self.remote_id = remote_id
        self.destination = destination
        self._inbox = bytearray()
        self._cond = threading.Condition()
        self._acked = threading.Event()
        self._acked.set()
        self._closed = False
        self._sent_close = False

    @property
    def closed(self) -> bool:
        return self._closed

    # -- used by services -------------------------------------------------------------
    def write(self, data: bytes) -> None:
        """Send ``data`` to the host, splitting it and waiting for each OKAY."""
        view = memoryview(data)
        step = self.transport.max_payload
        for start in range(0, len(view), step):
            if not self._acked.wait(ACK_TIMEOUT_S):
                raise StreamClosed(f"host did not acknowledge data on {self.destination!r}")
            if self._closed:
                raise StreamClosed(f"stream {self.destination!r} closed by the host")
            self._acked.clear()
            try:
                self.transport.send(
                    Message(A_WRTE, self.local_id, self.remote_id, bytes(view[start : start + step]))
                )
            except OSError as exc:
                self._mark_closed()
                raise StreamClosed(f"connection lost while writing {self.destination!r}: {exc}") from exc

    def read(self, n: int = 65536, timeout: float | None = None) -> bytes:
        """Up to ``n`` bytes; ``b""`` once the host closed the stream."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._inbox or self._closed, timeout):
                raise TimeoutError(f"no data on {self.destination!r} within {timeout}s")
            out = bytes(self._inbox[:n])
            del self._inbox[:n]
            return out

    def read_exact(self, n: int, timeout: float | None = None) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.read(n - len(buf), timeout)
            if not chunk:
                raise StreamClosed(f"stream {self.destination!r} closed after {len(buf)}/{n} bytes")
            buf += chunk
        return bytes(buf)

    def wait_closed(self, timeout: float | None = None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._closed, timeout)

    def close(self) -> None:
        """Close our end (sends CLSE once)."""
        if not self._sent_close:
            self._sent_close = True
            if not self._closed:
                with contextlib.suppress(OSError):
                    self.transport.send(Message(A_CLSE, self.local_id, self.remote_id))
        self._mark_closed()

    # -- used by the transport ----------------------------------------------------------
    def _on_data(self, data: bytes) -> None:
        with self._cond:
            self._inbox += data
            self._cond.notify_all()

    def _on_okay(self) -> None:
        self._acked.set()

    def _mark_closed(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._acked.set()
        self.transport._forget(self)


ServiceOpener = Callable[[str], "Callable[[Stream], None] | None"]


@dataclass
class DeviceIdentity:
    """What the device announces in its CNXN banner."""

    props: dict[str, str]
    features: list[str] = field(default_factory=lambda: ["shell_v2", "cmd", "fixed_push_mkdir"])
    require_auth: bool = False


class Transport:
    """One host connection: handshake, then a reader loop dispatching messages."""

    def __init__(self, sock: socket.socket, identity: DeviceIdentity, opener: ServiceOpener):
        self.sock = sock
        self.identity = identity
        self.opener = opener
        self.max_payload = MAX_PAYLOAD
        self._send_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()
        self._next_id = 1
        self._online = False
        self.closed = threading.Event()

    def send(self, msg: Message) -> None:
        with self._send_lock:
            self.sock.sendall(msg.pack())

    def _forget(self, stream: Stream) -> None:
        with self._streams_lock:
            self._streams.pop(stream.local_id, None)

    def _banner(self) -> bytes:
        from phone.virtual.wire.adb_protocol import connect_banner

        return connect_banner(self.identity.props, self.identity.features)

    def run(self) -> None:
        try:
            while True:
                msg = read_message(self.sock)
                self._dispatch(msg)
        except (ConnectionError, OSError) as exc:
            log.debug("adb transport ended: %s", exc)
        finally:
            self.shutdown()

    def _dispatch(self, msg: Message) -> None:
        if msg.command == A_CNXN:
            self.max_payload = max(4096, min(MAX_PAYLOAD, msg.arg1 or MAX_PAYLOAD))
            if self.identity.require_auth and not self._online:
                self.send(Message(A_AUTH, AUTH_TOKEN, 0, b"\x5a" * 20))
            else:
                self._go_online()
        elif msg.command == A_AUTH:
            # The virtual phone trusts every key: it accepts the first signature or
            # public key it is offered, which is what "always allow" on a phone does.
            if msg.arg0 in (AUTH_SIGNATURE, AUTH_RSAPUBLICKEY):
                self._go_online()
        elif not self._online:
            log.debug("ignoring %s before the handshake", msg.name)
        elif msg.command == A_OPEN:
            self._open(msg)
        elif msg.command == A_OKAY:
            stream = self._stream(msg.arg1)
            if stream is not None:
                if stream.remote_id == 0:
                    stream.remote_id = msg.arg0
                stream._on_okay()
        elif msg.command == A_WRTE:
            stream = self._stream(msg.arg1)
            if stream is None:
                self.send(Message(A_CLSE, 0, msg.arg0))
                return
            stream._on_data(msg.data)
            self.send(Message(A_OKAY, stream.local_id, stream.remote_id))
        elif msg.command == A_CLSE:
            stream = self._stream(msg.arg1)
            if stream is not None:
                stream._sent_close = True
                stream._mark_closed()

    def _go_online(self) -> None:
        self._online = True
        self.send(Message(A_CNXN, A_VERSION, MAX_PAYLOAD, self._banner()))

    def _stream(self, local_id: int) -> Stream | None:
        with self._streams_lock:
            return self._streams.get(local_id)

    def _open(self, msg: Message) -> None:
        destination = msg.data.rstrip(b"\x00").decode("utf-8", "replace")
        handler = None
        try:
            handler = self.opener(destination)
        except Exception:  # a broken service must not take the transport down
            log.exception("opening %r failed", destination)
        if handler is None:
            log.debug("refusing %r", destination)
            self.send(Message(A_CLSE, 0, msg.arg0))
            return
        with self._streams_lock:
            local_id = self._next_id
            self._next_id += 1
            stream = Stream(self, local_id, msg.arg0, destination)
            self._streams[local_id] = stream
        self.send(Message(A_OKAY, local_id, msg.arg0))
        threading.Thread(
            target=self._serve, args=(handler, stream), name=f"adb-svc-{destination[:24]}", daemon=True
        ).start()

    def _serve(self, handler: Callable[[Stream], None], stream: Stream) -> None:
        try:
            handler(stream)
        except StreamClosed as exc:
            log.debug("service %r: %s", stream.destination, exc)
        except Exception:
            log.exception("service %r crashed", stream.destination)
        finally:
            stream.close()

    def shutdown(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()
        with self._streams_lock:
            streams = list(self._streams.values())
        for s in streams:
            s._sent_close = True
            s._mark_closed()


class AdbTransportServer:
    """Listens on ``host:port`` (loopback only) and runs one ``Transport`` per connection."""

    def __init__(
        self,
        identity: DeviceIdentity,
        opener: ServiceOpener,
        port: int = 5555,
        host: str = "127.0.0.1",
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"the served phone listens on loopback only, not on {host!r}")
        self.identity = identity
        self.opener = opener
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind(("127.0.0.1", port))
        except OSError as exc:
            self._sock.close()
            raise OSError(
                f"cannot listen on 127.0.0.1:{port}: {exc.strerror}; pick another --port"
            ) from exc
        self._sock.listen(8)
        self.port = self._sock.getsockname()[1]
        self._transports: list[Transport] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, name="adb-accept", daemon=True)

    @property
    def serial(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> AdbTransportServer:
        if not self._thread.is_alive() and not self._stopped.is_set():
            self._thread.start()
        return self

    def _accept_loop(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _addr = self._sock.accept()
            except OSError:
                break
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            transport = Transport(conn, self.identity, self.opener)
            with self._lock:
                self._transports = [t for t in self._transports if not t.closed.is_set()]
                self._transports.append(transport)
            threading.Thread(target=transport.run, name="adb-transport", daemon=True).start()

    def drop_connections(self) -> None:
        """Cut every host connection (the listener stays up)."""
        with self._lock:
            transports, self._transports = self._transports, []
        for t in transports:
            t.shutdown()

    def stop(self) -> None:
        """Stop listening and cut every connection: the host sees the phone vanish."""
        self._stopped.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.close()
        self.drop_connections()
        if self._thread.is_alive():
            self._thread.join(timeout=2)

    def __enter__(self) -> AdbTransportServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
