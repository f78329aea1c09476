"""Serve a protobuf gRPC service so that bad calls get a clean status, never a traceback.

grpcio answers a request whose bytes do not decode as the method's request message with INTERNAL and logs
"Exception deserializing request!" with a traceback, once per call. ``add_guarded_service`` registers a
servicer's unary methods with a request decoder that never raises: undecodable bytes become INVALID_ARGUMENT
("the DecideRequest message could not be decoded"), nothing logged. An optional ``gate`` checks each call's
metadata before the request is looked at (the bot secret of ``arena_sdk.server``, the Arena's admin token).

Also here: the call-metadata key of the per-bot secret (``BOT_SECRET_METADATA``), which the referee sends on
every StartMatch, Decide and EndMatch call, ``secret_matches``, a constant-time comparison, and ``secret_problem``,
the one rule of what a bot secret may be (the SDK's ``serve``, the CLI and the arena's registration apply it).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import re
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import grpc
import grpc.aio
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor

from arena_sdk.call_watch import CALL_WATCH
from arena_sdk.peers import PeerShare

BOT_SECRET_METADATA = "arena-bot-secret"  # call metadata the referee sends to a bot registered with a secret
MIN_BOT_SECRET = 16  # characters of a bot secret, at least
MAX_BOT_SECRET = 256  # and at most
MAKE_SECRET = "(umask 077; python -c 'import secrets; print(secrets.token_hex(16))' > my.secret)"
_METADATA_TEXT = re.compile(r"[\x21-\x7e]+\Z")  # visible ASCII, no space: what call metadata carries as it is


def secret_problem(secret: str) -> str | None:
    """Why ``secret`` cannot be a bot secret, completing "the secret ...": "is empty" (also for only whitespace:
    a ``$(cat FILE)`` that failed), "has N characters ...", "has a space, a tab or a non-ASCII character ..."; None
    when it can be one: ``MIN_BOT_SECRET``..``MAX_BOT_SECRET`` visible ASCII characters without spaces (gRPC
    metadata). The text never holds the secret."""
    if not secret.strip():
        return "is empty"
    if not MIN_BOT_SECRET <= len(secret) <= MAX_BOT_SECRET:
        return f"has {len(secret)} characters: a bot secret has {MIN_BOT_SECRET}..{MAX_BOT_SECRET}"
    if not _METADATA_TEXT.match(secret):
        return ("has a space, a tab or a non-ASCII character: a bot secret is visible ASCII characters without "
                "spaces (gRPC call metadata carries no other)")
    return None
# A bidirectional stream holds a server thread from the moment it opens (grpcio's sync server), before any message:
# one whose first message has not come this long after it opened is cancelled, its thread freed. (The arena's
# referee writes its first message as it opens a stream.)
FIRST_MESSAGE_S = 10.0
# A stream the gate refuses waits this long at most for its first message (read so that a client still writing it
# gets the refusal rather than grpc core's "Internal error"), then is cancelled; at most REFUSED_WAITING refused
# streams wait at once: beyond them a refusal is at once (a stranger's flood of silent streams holds no more threads).
REFUSED_WAIT_S = 0.5
REFUSED_WAITING = 2
_REFUSED_SLOTS = threading.BoundedSemaphore(REFUSED_WAITING)

# gate(method name, context) -> None to go on, or (status code, message) to refuse the call with.
Gate = Callable[[str, grpc.ServicerContext], "tuple[grpc.StatusCode, str] | None"]
# validate(request) -> None, or why the request is refused (INVALID_ARGUMENT).
Validate = Callable[[Any], "str | None"]
# authorize(method name, request, context) -> None to go on, or (status code, message) to refuse the call with;
# called with the decoded, validated request (e.g. to check a signature over it).
Authorize = Callable[[str, Any, grpc.ServicerContext], "tuple[grpc.StatusCode, str] | None"]
# await admit(method name, grpc.aio context) on a grpc.aio server's loop once a unary call's request is in, before
# the method runs: returns to go on (it may wait first), or aborts the call; what it returns, when not None, is
# called (on the loop) as soon as the method has returned or raised, before its answer is sent.
AsyncAdmit = Callable[[str, Any], Awaitable["Callable[[], None] | None"]]


class Undecodable:
    """What the guarded decoder returns for bytes that are not a valid request message (grpcio takes a decoder
    that returns None for a missing message, so the failure must be an object)."""

    __slots__ = ("message_name", "error")

    def __init__(self, message_name: str, error: str) -> None:
        self.message_name = message_name
        self.error = error


def _decoder(message_cls: Any) -> Callable[[bytes], Any]:
    name = message_cls.DESCRIPTOR.name

    def decode(data: bytes) -> Any:
        try:
            return message_cls.FromString(data)
        except Exception as exc:  # DecodeError, or upb's errors (e.g. nesting too deep): never our traceback
            return Undecodable(name, " ".join(str(exc).split())[:200] or type(exc).__name__)

    return decode


def metadata_value(context: grpc.ServicerContext, key: str) -> str | None:
    """The value of call-metadata ``key`` (lower case) of the call, or None when it was not sent."""
    for item in context.invocation_metadata() or ():
        k, v = item[0], item[1]
        if k == key:
            return v.decode("latin-1") if isinstance(v, bytes) else str(v)
    return None


def secret_metadata(secret: str) -> tuple[tuple[str, str], ...] | None:
    """The call metadata that carries bot secret ``secret`` (``BOT_SECRET_METADATA``); None for "" (no secret)."""
    return ((BOT_SECRET_METADATA, secret),) if secret else None


def secret_matches(given: str | None, expected: str) -> bool:
    """True when ``given`` equals ``expected``, compared in constant time (of their SHA-256, so that neither the
    content nor the length of ``expected`` shows in the time taken)."""
    if given is None:
        return False
    a = hashlib.sha256(given.encode("utf-8", "surrogateescape")).digest()
    b = hashlib.sha256(expected.encode("utf-8", "surrogateescape")).digest()
    return hmac.compare_digest(a, b)


def _behaviour(method_name: str, function: Callable[[Any, grpc.ServicerContext], Any],
               gate: Gate | None, validate: Validate | None,
               authorize: Authorize | None = None, share: PeerShare | None = None,
               ) -> Callable[[Any, grpc.ServicerContext], Any]:
    """A unary method as a unary handler runs it (a ``grpc.aio`` server's, which receives the request before a thread
    runs it): the share, the gate, then ``_handled``."""
    def behaviour(request: Any, context: grpc.ServicerContext) -> Any:
        with _in_share(share, context):
            _admit(gate, method_name, context)
            return _handled(method_name, function, validate, authorize, request, context)

    behaviour.__name__ = method_name
    return behaviour


@contextlib.contextmanager
def _in_share(share: PeerShare | None, context: grpc.ServicerContext) -> Iterator[None]:
    """The call counted in ``share`` (by its client address) while the block runs; aborts with RESOURCE_EXHAUSTED
    over it. Nothing without a share."""
    if share is None:
        yield
        return
    address = share.enter(context)
    if address is None:
        share.refuse(context)
    try:
        yield
    finally:
        share.leave(address or "")


def _admit(gate: Gate | None, method_name: str, context: grpc.ServicerContext) -> None:
    if gate is not None:
        refusal = gate(method_name, context)
        if refusal is not None:
            context.abort(*refusal)


def _handled(method_name: str, function: Callable[[Any, grpc.ServicerContext], Any], validate: Validate | None,
             authorize: Authorize | None, request: Any, context: grpc.ServicerContext) -> Any:
    """A unary call's answer once admitted: an undecodable or invalid request refused (INVALID_ARGUMENT), then
    ``authorize``, then ``function``."""
    if isinstance(request, Undecodable):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      f"the {request.message_name} message of this {method_name} call could not be decoded "
                      f"({request.error}); send a serialized {request.message_name}")
    if validate is not None:
        problem = validate(request)
        if problem is not None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
    if authorize is not None:
        refusal = authorize(method_name, request, context)
        if refusal is not None:
            context.abort(*refusal)
    return function(request, context)


def _unary_from_stream(method_name: str, function: Callable[[Any, grpc.ServicerContext], Any],
                       gate: Gate | None, validate: Validate | None,
                       authorize: Authorize | None = None, share: PeerShare | None = None,
                       ) -> Callable[[Iterator[Any], grpc.ServicerContext], Any]:
    """A unary method served on grpcio's sync server as one whose request streams (the same bytes on the wire: one
    message, then the client's end). grpcio gives a unary call a thread before its request has come, and that thread
    waits for it as long as the client likes: a stranger's calls that never send one would hold every thread. Here
    the share and the gate are checked on the call's metadata first (a call the gate refuses waits at most
    ``REFUSED_WAIT_S`` for its request, as a refused stream), and a request that has not come within
    ``FIRST_MESSAGE_S`` cancels the call; then ``_handled``."""
    def behaviour(requests: Iterator[Any], context: grpc.ServicerContext) -> Any:
        with _in_share(share, context):
            if gate is not None and gate(method_name, context) is not None:
                _refuse_stream(gate, method_name, requests, context)
            waiting = CALL_WATCH.watch(context, FIRST_MESSAGE_S)
            try:
                request = next(requests, None)
            except grpc.RpcError:  # cancelled (no request in time, or by the client): the call is over
                return None
            finally:
                CALL_WATCH.done(waiting)
            if request is None:
                context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{method_name} takes exactly one request message")
            return _handled(method_name, function, validate, authorize, request, context)

    behaviour.__name__ = method_name
    return behaviour


# grpc.aio's context of a method run in a thread (what the server gives its own thread-run methods): private, so
# without it (another grpcio) a unary method is registered as one
try:
    from grpc._cython.cygrpc import _SyncServicerContext as _SYNC_CONTEXT  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - grpcio 1.85 has it
    _SYNC_CONTEXT = None


class _ThreadContext:
    """The context a unary method run in a thread gets on a ``grpc.aio`` server: grpc.aio's own for thread-run
    methods (``_SYNC_CONTEXT``), with the call's ``peer()`` read on the server's loop when the call starts. A method
    may run on after its client left (a long bot check): grpc frees the call then, and ``peer()``, which reads it,
    crashed the process (a segfault in cygrpc: a client that cancelled ``RegisterBot`` during the bot check killed
    the referee). ``is_active()`` (as a sync server's context has it) is False once the call is over (``end``: its
    client left, or it was answered): a method may then skip work nobody will receive. Every other method is the
    wrapped context's."""

    __slots__ = ("_context", "_peer", "_over")

    def __init__(self, context: Any) -> None:
        self._context = _SYNC_CONTEXT(context)
        self._peer = context.peer()
        self._over = False  # set on the server's loop, read in the method's thread (one attribute: no lock needed)

    def peer(self) -> str:
        return str(self._peer)

    def is_active(self) -> bool:
        return not self._over

    def end(self) -> None:
        self._over = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def _aio_unary(method_name: str, behaviour: Callable[[Any, Any], Any],
               admit: AsyncAdmit | None = None) -> Callable[..., Any]:
    """A unary method on a ``grpc.aio`` server, served as one whose request streams (the same bytes on the wire):
    its request is awaited on the server's loop for at most ``FIRST_MESSAGE_S`` (a call that never sends one costs
    no thread, and no memory past that: DEADLINE_EXCEEDED), then ``admit(method name, context)`` is awaited on the
    loop (when given; it may wait, or abort the call), then ``behaviour`` runs in the loop's default executor (the
    server's thread pool, which the caller sets) with a context as the server gives its own thread-run methods;
    what ``admit`` returned (when not None) is called once it has returned or raised. Marked ``grpc_type =
    "unary"`` for the RPC metrics."""
    async def unary(requests: Any, context: Any) -> Any:
        try:
            request = await asyncio.wait_for(requests.__anext__(), FIRST_MESSAGE_S)
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                f"no {method_name} request came within {FIRST_MESSAGE_S:g} s of the call")
        except StopAsyncIteration:  # the client ended its side (most often: it left) before sending a request
            await context.abort(grpc.StatusCode.CANCELLED, f"the {method_name} call ended before its request came")
        ran = await admit(method_name, context) if admit is not None else None
        loop = asyncio.get_running_loop()
        in_thread = _ThreadContext(context)
        try:
            if ran is None:
                return await loop.run_in_executor(None, behaviour, request, in_thread)
            return await _run_then(loop, ran, behaviour, request, in_thread)
        finally:  # answered, failed, or its client left (cancelled): the method may still run, for nobody
            in_thread.end()

    unary.__name__ = method_name
    unary.grpc_type = "unary"  # type: ignore[attr-defined]
    return unary


async def _run_then(loop: asyncio.AbstractEventLoop, ran: Callable[[], None],
                    behaviour: Callable[[Any, Any], Any], request: Any, context: Any) -> Any:
    """``behaviour(request, context)`` in ``loop``'s default executor, then ``ran()`` on the loop once it has
    returned or raised: when the call is cancelled meanwhile (its client left), still only once the thread is done
    with it (a client cancelling its calls frees nothing early), or at once when it had not started (it never
    will)."""
    lock = threading.Lock()
    state = {"started": False, "dropped": False}

    def run() -> Any:
        with lock:
            if state["dropped"]:
                return None
            state["started"] = True
        try:
            return behaviour(request, context)
        finally:
            with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: the server is gone
                loop.call_soon_threadsafe(ran)

    try:
        return await loop.run_in_executor(None, run)
    except asyncio.CancelledError:
        with lock:
            if not state["started"]:
                state["dropped"] = True
                ran()
        raise


def _refuse_stream(gate: Gate, method_name: str, requests: Iterator[Any], context: grpc.ServicerContext) -> None:
    """Abort a call or stream ``gate`` refuses. Its first message is read (and dropped) first: a client still writing
    it when the status came would see grpc's "Internal error from Core" instead of the refusal; a client that never
    writes one is cancelled after ``REFUSED_WAIT_S`` instead, so that it holds no thread; while ``REFUSED_WAITING``
    others wait, no wait."""
    if _REFUSED_SLOTS.acquire(blocking=False):
        waiting = CALL_WATCH.watch(context, REFUSED_WAIT_S)
        try:
            next(requests, None)
        except grpc.RpcError:
            pass
        finally:
            CALL_WATCH.done(waiting)
            _REFUSED_SLOTS.release()
    _admit(gate, method_name, context)


def _stream_behaviour(method_name: str, function: Callable[[Iterator[Any], grpc.ServicerContext], Iterator[Any]],
                      gate: Gate | None, share: PeerShare | None = None,
                      ) -> Callable[[Iterator[Any], grpc.ServicerContext], Iterator[Any]]:
    """A bidirectional method: ``gate`` checks the stream's metadata once, when it opens (a refused stream ends with
    the refusal once its first message is in, unread, or is cancelled after ``REFUSED_WAIT_S``; at once while
    ``REFUSED_WAITING`` refused streams wait); a stream whose
    first message has not come within ``FIRST_MESSAGE_S`` is cancelled; a message that does not decode ends the
    stream with INVALID_ARGUMENT."""

    def checked(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        first = CALL_WATCH.watch(context, FIRST_MESSAGE_S)
        try:
            for request in requests:
                CALL_WATCH.done(first)
                if isinstance(request, Undecodable):
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                  f"a {request.message_name} message of this {method_name} stream could not be "
                                  f"decoded ({request.error}); send serialized {request.message_name} messages")
                yield request
        except grpc.RpcError:  # cancelled (silent too long, or by the client): the stream is over
            return
        finally:
            CALL_WATCH.done(first)

    def behaviour(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        if gate is not None and gate(method_name, context) is not None:
            _refuse_stream(gate, method_name, requests, context)
        return function(checked(requests, context), context)

    def shared(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        with _in_share(share, context):
            yield from behaviour(requests, context)

    chosen = behaviour if share is None else shared
    chosen.__name__ = method_name
    return chosen


def add_guarded_service(server: grpc.Server | grpc.aio.Server, service: ServiceDescriptor, servicer: Any,
                        gate: Gate | None = None, validate: Validate | None = None,
                        authorize: Authorize | None = None, share: PeerShare | None = None,
                        admit: AsyncAdmit | None = None) -> None:
    """Register ``servicer`` (an object with one method per RPC of ``service``, as the generated ``*Servicer``
    classes) on ``server`` (grpcio's, or a ``grpc.aio`` server whose thread pool runs them), instead of the
    generated ``add_*Servicer_to_server``: undecodable requests get INVALID_ARGUMENT without a log line; ``gate``
    (when given) may refuse a call by its metadata first, and ``validate(request)`` (when given) may refuse a
    decoded request with INVALID_ARGUMENT by returning a message (e.g. a field over its size limit), and
    ``authorize(method, request, context)`` (when given) may refuse a decoded, valid request by returning (status
    code, message). Unary and bidirectional methods are supported (raises ``ValueError`` for a method streaming one
    way, and for ``validate`` or ``authorize`` with a bidirectional one): a bidirectional method's ``gate`` runs
    once when the stream opens (a refused stream ends with the refusal once its first message is in, unread), and a
    message that does not decode ends the stream with INVALID_ARGUMENT. With ``share``, a call or stream over its
    client address's share (``PeerShare``) is refused at once with RESOURCE_EXHAUSTED. On a ``grpc.aio`` server,
    ``admit`` (when given) is awaited on its loop once a unary call's request is in (see ``AsyncAdmit``)."""
    handlers = {}
    for method in service.methods:
        request_cls = message_factory.GetMessageClass(method.input_type)
        response_cls = message_factory.GetMessageClass(method.output_type)
        if method.client_streaming and method.server_streaming:
            if validate is not None or authorize is not None:
                raise ValueError(f"{service.full_name}.{method.name} streams; validate and authorize check unary "
                                 f"requests only")
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _stream_behaviour(method.name, getattr(servicer, method.name), gate, share),
                request_deserializer=_decoder(request_cls),
                response_serializer=response_cls.SerializeToString,
            )
            continue
        if method.client_streaming or method.server_streaming:
            raise ValueError(f"{service.full_name}.{method.name} streams one way; add_guarded_service serves unary "
                             f"and bidirectional methods")
        if isinstance(server, grpc.aio.Server):  # receives the request on its loop, then runs the method
            behaviour = _behaviour(method.name, getattr(servicer, method.name), gate, validate, authorize, share)
            if _SYNC_CONTEXT is not None:
                handlers[method.name] = grpc.stream_unary_rpc_method_handler(
                    _aio_unary(method.name, behaviour, admit), request_deserializer=_decoder(request_cls),
                    response_serializer=response_cls.SerializeToString)
            else:  # a grpcio without it: the request has no deadline (it holds no thread either way)
                handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                    behaviour, request_deserializer=_decoder(request_cls),
                    response_serializer=response_cls.SerializeToString)
        else:
            handlers[method.name] = grpc.stream_unary_rpc_method_handler(
                _unary_from_stream(method.name, getattr(servicer, method.name), gate, validate, authorize, share),
                request_deserializer=_decoder(request_cls),
                response_serializer=response_cls.SerializeToString,
            )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
    register = getattr(server, "add_registered_method_handlers", None)
    if register is not None:  # grpcio >= 1.63: the faster lookup, as the generated code does
        register(service.full_name, handlers)
