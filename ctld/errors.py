"""The one mapping from domain errors to gRPC status codes.

A controller deposed by another (ctld.leadership) answers as a standby does.

Imports minislurm.errors, minislurm.wire.ctlclient, ctld.leadership and grpc.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from ctld.leadership import Deposed
from ctld.steps import StepBusy
from minislurm.errors import (
    InvalidRequest,
    InvalidTransition,
    JobNotFound,
    MinislurmError,
    NodeNotFound,
    PermissionDenied,
)
from minislurm.wire.ctlclient import STANDBY

log = logging.getLogger(__name__)

_CODES: tuple[tuple[type[MinislurmError], grpc.StatusCode], ...] = (
    (JobNotFound, grpc.StatusCode.NOT_FOUND),
    (NodeNotFound, grpc.StatusCode.NOT_FOUND),
    (InvalidRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (InvalidTransition, grpc.StatusCode.FAILED_PRECONDITION),
    (StepBusy, grpc.StatusCode.RESOURCE_EXHAUSTED),
)

R = TypeVar("R")


def status_code(err: MinislurmError) -> grpc.StatusCode:
    """The gRPC status for a domain error.

    Args:
        err: the error.

    Returns:
        Its status code (INTERNAL for an unmapped kind).
    """
    for kind, code in _CODES:
        if isinstance(err, kind):
            return code
    return grpc.StatusCode.INTERNAL


def grpc_errors(
    handler: Callable[..., Awaitable[R]],
) -> Callable[..., Awaitable[R]]:
    """Decorate an async servicer method: domain errors become gRPC statuses.

    Args:
        handler: ``async def Method(self, request, context)``.

    Returns:
        The wrapped handler.
    """

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> R:
        try:
            return await handler(self, request, context)
        except MinislurmError as err:
            await context.abort(status_code(err), str(err))
            raise  # abort() raises; this line is never reached
        except Deposed:  # nothing was written: the caller tries the controller in control
            await context.abort(grpc.StatusCode.UNAVAILABLE, STANDBY)
            raise

    return wrapper
