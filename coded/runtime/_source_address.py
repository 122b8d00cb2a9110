"""Bind every outgoing Dask connection of this process to one source address.

A connection's bytes leave with the address of the socket they are sent from. A
server answers on the address it listens on, but a connection it *opens*
(a worker reporting to the scheduler, a client scattering data, a peer pushing
a shuffle) would leave with the kernel's default source (``127.0.0.1`` for
every loopback destination), so a link shaped by source address would not see
it. Dask has no setting for the source address of the connections it opens;
tornado's ``TCPClient.connect`` has one (``source_ip``), which this module sets
for every connection ``distributed``'s TCP connector opens.

Used as a Dask preload (``dask worker --preload coded.runtime._source_address``)
with the address in the environment variable `ENV`, or called directly
(:func:`bind_source_address`) in the client's process.
"""

from __future__ import annotations

import os
from typing import Any

from distributed.comm.tcp import BaseTCPConnector
from tornado.tcpclient import TCPClient

__all__ = ["ENV", "bind_source_address", "bound_source_address"]

ENV = "CODED_SOURCE_ADDRESS"


class _SourceBoundTCPClient(TCPClient):
    """A ``TCPClient`` whose connections leave from `source_ip` unless told."""

    def __init__(self, source_ip: str, resolver: Any) -> None:
        super().__init__(resolver=resolver)
        self.source_ip = source_ip

    async def connect(  # type: ignore[override]
        self, host: str, port: int, *args: Any, source_ip: str | None = None, **kw: Any
    ) -> Any:
        return await super().connect(
            host, port, *args, source_ip=source_ip or self.source_ip, **kw
        )


def bind_source_address(source_ip: str | None) -> None:
    """Open every later Dask TCP connection of this process from `source_ip`.

    None restores the kernel's choice.
    """
    current = BaseTCPConnector.client
    resolver = current.resolver
    if source_ip is None:
        BaseTCPConnector.client = TCPClient(resolver=resolver)
    else:
        BaseTCPConnector.client = _SourceBoundTCPClient(source_ip, resolver)


def bound_source_address() -> str | None:
    """Return the source address this process binds Dask connections to, if any."""
    return getattr(BaseTCPConnector.client, "source_ip", None)


if os.environ.get(ENV):  # as a preload of a Dask process started by the harness
    bind_source_address(os.environ[ENV])
