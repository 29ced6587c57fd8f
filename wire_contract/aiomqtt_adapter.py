"""The one module that reaches into aiomqtt's private parts (written against aiomqtt 2.5,
paho-mqtt 2.2). tests/system/test_aiomqtt_adapter.py pins each of them and fails loudly when an
upgrade moves one; tests/system/test_library_privates.py keeps every other module off them.

What is reached, why, and what replaces it on an upgrade:

- ``Client._client``, the paho client under aiomqtt (:func:`paho_client`). aiomqtt has no
  option for manual acks, the connect timeout or the socket; paho has them as public API
  (``manual_ack_set``, ``ack(mid, qos)``, ``socket()``, ``connect_timeout``), and only that is
  used on it. Replace with aiomqtt's own arguments if it grows them.
- ``Client._wait_for``, overridden by :class:`CancellableClient`: aiomqtt waits for CONNACK,
  SUBACK, PUBACK and the disconnect with ``asyncio.wait_for``, which on Python 3.11 loses a
  cancellation arriving in the same loop pass as the result (CPython gh-86296, fixed in
  3.12). Drop the override on Python >= 3.12 or when aiomqtt waits with ``asyncio.timeout``.
- ``Client._on_socket_register_write``, overridden (with ``_loop`` and ``_disconnected``
  inside): aiomqtt's deferred ``add_writer`` hit a socket paho had already closed (EBADF,
  logged as an ERROR). Drop it when aiomqtt checks the socket itself. With ``write_at_once``
  it writes at once, as paho does without a registered writer; paho's ``_in_callback_mutex``
  (the test paho makes itself before writing in the caller's call) is read there.
- ``Client._on_publish``, extended: aiomqtt's PUBACK callback also completes the futures of
  :meth:`CancellableClient.publish_now` (paho's public ``publish`` made in the caller's call,
  not a task's turn later). Drop it if aiomqtt can begin a publish without awaiting it.
- ``Client._disconnected`` (the future aiomqtt completes when the link is gone), watched by
  :func:`end_queue_when_gone`: the station's collector waits on its message queue itself
  (a marker says the link is gone) instead of aiomqtt's iterator, which costs a task and
  ``asyncio.wait`` a message. Drop it if aiomqtt's iterator waits on the queue alone.
- ``Client._on_socket_open``, extended: it records the connection's reader
  (:func:`socket_reader`, the same work as aiomqtt's own: paho's public ``loop_read`` until an
  SSL socket has nothing pending; a failure ends the connection), so the read gate pauses and
  resumes reading with asyncio's public ``remove_reader``/``add_reader`` instead of digging
  aiomqtt's callback out of the loop's selector; that reader replaces aiomqtt's (the loop's
  public ``add_reader`` on the same descriptor) and reads a burst of packets a turn instead of
  one. Drop it if aiomqtt can pause reading and reads what the socket holds.
"""

from __future__ import annotations

import asyncio
import fcntl
import math
import struct
import termios
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import aiomqtt
import paho.mqtt.client as paho

__all__ = [
    "GONE",
    "CancellableClient",
    "end_queue_when_gone",
    "gate_reading",
    "link_gone",
    "paho_client",
    "publish_now",
    "set_connect_timeout",
    "socket_reader",
]

T = TypeVar("T")


class CancellableClient(aiomqtt.Client):
    """aiomqtt's client, with its waits (CONNACK, SUBACK, PUBACK, the disconnect) made with
    ``asyncio.timeout`` instead of ``asyncio.wait_for``. On Python 3.11 ``wait_for`` swallows a
    cancellation that arrives in the same loop pass as the awaited acknowledgement (CPython
    gh-86296, fixed in 3.12): a node stopped just as a SUBACK came back went on into its
    drain/receive TaskGroup and waited there forever."""

    reader: Callable[[], None] | None = None  # this connection's socket reader, once open
    _loop_thread: int | None = None  # the event loop's thread (the client is made on it)
    # Whether the reader may take another packet now (the station's read gate says no once its
    # queue is full: it removes the reader, and a burst under way stops with it).
    may_read: Callable[[], bool] = staticmethod(lambda: True)
    # Write a publish in the call that makes it (``_on_socket_register_write``): the node's
    # links, whose every event someone waits for. The station's many acks go a turn later,
    # together.
    write_at_once = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # takes the running loop: this is its thread
        self._loop_thread = threading.get_ident()
        self._acks: dict[int, asyncio.Future[None]] = {}  # publish_now's, by message id

    def publish_now(
        self, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False
    ) -> asyncio.Future[None]:
        """Publish in this call (paho's ``publish``; with ``write_at_once`` on the socket
        before it returns); the future ends when the broker has acknowledged it. aiomqtt's
        ``publish`` does the same, but as a coroutine: a task's first step, and so the
        publish, comes a turn of the loop after whoever asked for it (issue 30: the flag)."""
        info = self._client.publish(topic, payload, qos, retain)
        if info.rc != paho.MQTT_ERR_SUCCESS:
            raise aiomqtt.MqttCodeError(info.rc, "Could not publish message")
        ack: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if qos == 0 or info.is_published():
            ack.set_result(None)
        else:
            self._acks[info.mid] = ack
        return ack

    def _on_publish(
        self, client: Any, userdata: Any, mid: int, reason_code: Any, properties: Any
    ) -> None:
        """As aiomqtt's (its own publishes), and ``publish_now``'s acknowledgements."""
        super()._on_publish(client, userdata, mid, reason_code, properties)
        ack = self._acks.pop(mid, None)
        if ack is not None and not ack.done():
            ack.set_result(None)

    async def _wait_for(self, fut: Awaitable[T], timeout: float | None) -> T:
        if timeout is None:
            timeout = self.timeout
        try:
            async with asyncio.timeout(None if timeout == math.inf else timeout):
                return await fut
        except TimeoutError:
            raise aiomqtt.MqttError("Operation timed out") from None

    def _on_socket_open(self, client: Any, userdata: Any, sock: Any) -> None:
        """As aiomqtt's, with a reader of our own in place of aiomqtt's: it reads up to
        ``READ_BURST`` packets while the socket holds more (aiomqtt's reads one: paho's
        ``loop_read`` takes a single packet, so every message cost a turn of the event loop,
        its epoll wait, a PUBACK written alone and a writer's batch of one; issue 30). The read
        gate pauses and resumes this reader."""
        fd = sock.fileno()

        def read() -> None:
            try:
                for _ in range(READ_BURST):
                    client.loop_read()
                    pending = getattr(sock, "pending", None)  # ssl.SSLSocket.pending()
                    if pending is not None and pending() > 0:
                        continue
                    if not self.may_read() or _unread_bytes(fd) <= 0:
                        break
            except Exception as exc:  # aiomqtt's own handling: the link broke
                if not self._disconnected.done():
                    self._disconnected.set_exception(exc)

        self.reader = read
        super()._on_socket_open(client, userdata, sock)
        # After aiomqtt's own add_reader (also deferred to the loop): this one replaces it.
        self._loop.call_soon_threadsafe(self._loop.add_reader, fd, read)

    def _on_socket_register_write(self, client: Any, userdata: Any, sock: Any) -> None:
        """As aiomqtt's, but the writer is registered only if the socket is still open and
        still the client's when the loop gets to it. A publish on a connection that has just
        died asks for a writer, paho closes the socket before the next loop pass, and aiomqtt's
        deferred ``add_writer`` then hit a closed descriptor (EBADF, logged as an ERROR; a
        station stopping just after its broker did this every time) — or a reused one.

        With ``write_at_once``, a packet queued on the loop's thread outside paho's callbacks
        is written in the call that queued it, as paho does when it runs its own loop (paho's
        ``_in_callback_mutex`` is how paho itself tells); a writer is registered only for
        what the socket did not take. Without it the packet waited for two turns of the loop
        (the deferred ``add_writer``, then the socket's writable event): the node's flag,
        which the arbiter waits for, spent ~0.3 ms there (issue 30)."""

        def write() -> None:
            try:
                client.loop_write()
            except Exception as exc:  # aiomqtt's own handling: the link broke
                if not self._disconnected.done():
                    self._disconnected.set_exception(exc)

        def register() -> None:
            if sock.fileno() >= 0 and client.socket() is sock:
                self._loop.add_writer(sock.fileno(), write)

        # paho may call this from the executor thread that runs connect(): threadsafe then.
        # From the loop's own thread (every publish and ack) a plain call_soon: the threadsafe
        # one writes to the loop's self-pipe and wakes it, a syscall each way per message.
        if self._loop_thread != threading.get_ident():
            self._loop.call_soon_threadsafe(register)
        elif self.write_at_once and client._in_callback_mutex.acquire(False):
            client._in_callback_mutex.release()
            write()  # paho marks the write registered: what remains (if any) needs a writer
            if client.want_write() and client.socket() is sock:
                self._loop.add_writer(sock.fileno(), write)
        else:
            self._loop.call_soon(register)


READ_BURST = 64  # packets a turn of the loop at most: ~5 ms of others' wait, at worst


def _unread_bytes(fd: int) -> int:
    """Bytes the kernel holds for ``fd`` not read yet (FIONREAD); 0 when it cannot say."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return 0


def publish_now(
    client: aiomqtt.Client, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False
) -> asyncio.Future[None]:
    """:meth:`CancellableClient.publish_now` of a client :func:`mqtt_client` built."""
    if not isinstance(client, CancellableClient):
        raise TypeError(f"publish_now needs the project's client, not {type(client).__name__}")
    return client.publish_now(topic, payload, qos=qos, retain=retain)


def paho_client(client: aiomqtt.Client) -> paho.Client:
    """The paho client under ``client``: use only paho's public API on it."""
    inner: paho.Client = client._client
    return inner


def set_connect_timeout(client: aiomqtt.Client, seconds: float) -> None:
    """paho's TCP connect timeout (aiomqtt has no argument for it; paho's default is 5 s)."""
    paho_client(client).connect_timeout = seconds


def gate_reading(client: aiomqtt.Client, may_read: Callable[[], bool]) -> None:
    """A burst of reads stops as soon as ``may_read()`` is false (a :class:`CancellableClient`;
    others read a packet a turn anyway)."""
    if isinstance(client, CancellableClient):
        client.may_read = may_read


class _Gone:
    """The marker a client's message queue gets once its link is gone."""


GONE = _Gone()


def end_queue_when_gone(client: aiomqtt.Client, queue: asyncio.Queue[Any]) -> None:
    """Put :data:`GONE` in ``queue`` (the client's message queue, made from its
    ``queue_type``) once the connection is gone, so a reader waiting on the queue itself learns
    it. aiomqtt's own iterator waits with a task and ``asyncio.wait`` a message for the same
    news: two or three turns of the loop before a message that arrives alone is handled."""
    client._disconnected.add_done_callback(lambda _done: queue.put_nowait(GONE))


def link_gone(client: aiomqtt.Client) -> aiomqtt.MqttError:
    """The error a reader raises on :data:`GONE` (what aiomqtt's iterator raises)."""
    done = client._disconnected
    cause = done.exception() if done.done() else None
    error = aiomqtt.MqttError("Disconnected during message iteration")
    error.__cause__ = cause
    return error


def socket_reader(client: aiomqtt.Client) -> Callable[[], None] | None:
    """What reads the open connection's socket (a :class:`CancellableClient`'s), or None."""
    return client.reader if isinstance(client, CancellableClient) else None
