"""Credentials on the daemons' gRPC channels: checked on entry, added on exit.

:class:`Authenticator` is the one place where a daemon's gRPC server checks
the credential of every call (``minislurm.security.auth``) before any handler runs.
A call without a valid one ends with ``UNAUTHENTICATED`` and is logged with
its peer; it reaches no handler, so it changes nothing. A valid one binds the
request to the caller: a ``requester_uid`` field (of the request or its
``spec``) is overwritten with the authenticated uid, and a job's ``uid`` and
``gid`` must be the caller's own unless the caller is privileged (root or the
daemon's own user, Slurm's SlurmUser). Methods only daemons may call refuse
everyone else with ``PERMISSION_DENIED``.

:class:`SignCalls` adds a credential to each call a daemon makes (grpcio
client interceptor); commands add theirs in ``minislurm.wire.ctlclient``.

Every request is also held to ``minislurm.limits`` (INVALID_ARGUMENT).

Imports minislurm.security.auth, minislurm.limits and grpc.
"""

from __future__ import annotations

import logging
import os
import pwd
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextvars import ContextVar
from typing import Any

import grpc
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

from minislurm import limits
from minislurm.security import auth

log = logging.getLogger(__name__)

Verifier = Callable[[str, str], Awaitable[auth.Identity]]
"""Checks ``(token, method)``; raises :class:`minislurm.security.auth.AuthError`."""

DENIED = "Access/permission denied"
# The uid of the call being handled (each call is a task of its own), once authenticated.
_CALLER: ContextVar[int] = ContextVar("caller_uid", default=-1)


def caller_uid() -> int:
    """The authenticated caller of the call being handled; -1 before (or without) that."""
    return _CALLER.get()


def privileged_uids(slurm_user: str = "root") -> frozenset[int]:
    """Root, this daemon's own user and ``SlurmUser`` (a name or a uid; unknown: left out)."""
    uids = {0, os.getuid()}
    try:
        uids.add(int(slurm_user) if slurm_user.isdigit() else pwd.getpwnam(slurm_user).pw_uid)
    except KeyError:
        log.warning("SlurmUser=%s is not a known user", slurm_user)
    return frozenset(uids)


class Authenticator(grpc.aio.ServerInterceptor):
    """Checks every call's credential before its handler runs.

    Args:
        verify: checks a credential for a method path.
        daemon_only: method names (``"Heartbeat"``) only privileged callers may call.
        exempt: method names that carry a credential of their own (a signed
            step credential) and are checked by their handler instead.
        privileged: uids that may act for anyone (default: :func:`privileged_uids`).
    """

    def __init__(
        self,
        verify: Verifier,
        daemon_only: Collection[str] = (),
        exempt: Collection[str] = (),
        privileged: frozenset[int] | None = None,
    ) -> None:
        self.verify = verify
        self.daemon_only = frozenset(daemon_only)
        self.exempt = frozenset(exempt)
        self.privileged = privileged_uids() if privileged is None else privileged

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        """Wrap the handler of ``details.method`` in :meth:`admit`."""
        handler = await continuation(details)
        path = details.method
        name = path.rsplit("/", 1)[-1]
        if handler is None:
            return handler
        decode = handler.request_deserializer
        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                request = await self.admit(path, name, decode, raw, context)
                return await inner(request, context)

            return handler._replace(unary_unary=unary, request_deserializer=None)
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def stream(
                raw: bytes, context: grpc.aio.ServicerContext[Any, Any]
            ) -> AsyncIterator[Any]:
                request = await self.admit(path, name, decode, raw, context)
                async for reply in inner_stream(request, context):
                    yield reply

            return handler._replace(unary_stream=stream, request_deserializer=None)
        return handler  # no client-streaming methods exist

    async def admit(
        self,
        path: str,
        name: str,
        decode: Callable[[bytes], Any],
        raw: bytes,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> Any:
        """Decode one call's request, authenticate the call, bind the request to the
        caller and bound its size; return the request (or abort the call)."""
        try:
            request = decode(raw)
        except DecodeError as err:
            log.warning("%s from %s: undecodable request: %s", name, context.peer(), err)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Unable to decode the request")
        if name not in self.exempt:
            await self.authenticate(path, name, request, context)
        too_big = limits.violation(request)
        if too_big:
            log.warning("%s from %s refused: %s", name, context.peer(), too_big)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Argument too long: {too_big}")
        return request

    async def authenticate(
        self, path: str, name: str, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> auth.Identity:
        """Check the call's credential and bind its request to the caller (or abort it)."""
        tokens = [v for k, v in context.invocation_metadata() or () if k == auth.HEADER]
        try:
            if len(tokens) != 1:
                raise auth.AuthError("no credential" if not tokens else "several credentials")
            who = await self.verify(str(tokens[0]), path)
        except auth.AuthError as err:
            log.warning("auth: %s from %s rejected: %s", name, context.peer(), err)
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, f"Protocol authentication error: {err}"
            )
            raise  # abort raises; this line is for the type checker
        _CALLER.set(who.uid)
        denied = self.bind(name, request, who)
        if denied:
            log.warning(
                "auth: %s by uid=%d from %s (%s) denied: %s",
                name,
                who.uid,
                who.host,
                context.peer(),
                denied,
            )
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, DENIED)
        return who

    def bind(self, name: str, request: Any, who: auth.Identity) -> str:
        """Make the request speak for its caller; the reason to refuse it, or "".

        Args:
            name: the method.
            request: the decoded request (changed in place).
            who: the authenticated caller.
        """
        privileged = who.uid in self.privileged
        if name in self.daemon_only and not privileged:
            return "a daemon-only method"
        spec = getattr(request, "spec", None)
        for message in (request, spec):
            if message is not None and _has_field(message, "requester_uid"):
                message.requester_uid = who.uid
        if spec is not None and _has_field(spec, "uid") and not privileged:
            if spec.uid != who.uid or spec.gid != who.gid:
                return f"job for uid={spec.uid} gid={spec.gid} from uid={who.uid} gid={who.gid}"
        return ""


def _has_field(message: Any, field: str) -> bool:
    descriptor = getattr(message, "DESCRIPTOR", None)
    return descriptor is not None and field in descriptor.fields_by_name


def verifier_for(auth_type: str, key: bytes) -> Verifier:
    """How a daemon checks credentials under ``AuthType``."""
    if auth_type == "auth/munge":
        from minislurm.security import munge

        return munge.verify
    return hmac_verifier(key)


def daemon_signer(auth_type: str, key: bytes) -> auth.Signer:
    """How a daemon signs its own calls under ``AuthType``."""
    if auth_type == "auth/munge":
        from minislurm.security import munge

        return munge.sign
    return auth.KeySigner(key)


def hmac_verifier(key: bytes) -> Verifier:
    """A verifier for ``auth/slurm`` credentials, with its own replay cache."""
    replay = auth.ReplayCache(since=time.time())

    async def verify(token: str, method: str) -> auth.Identity:
        return auth.check(key, token, method, time.time(), replay)

    return verify


class SignCalls(grpc.aio.UnaryUnaryClientInterceptor):
    """Adds a fresh credential to every unary call on a channel.

    Args:
        signer: makes the credential for a method path.
    """

    def __init__(self, signer: auth.Signer) -> None:
        self.signer = signer

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        """Call on with the credential added to the metadata."""
        method = details.method
        path = method.decode() if isinstance(method, bytes) else method
        metadata = grpc.aio.Metadata(*tuple(details.metadata or ()))
        metadata.add(auth.HEADER, self.signer(path))
        return await continuation(details._replace(metadata=metadata), request)
