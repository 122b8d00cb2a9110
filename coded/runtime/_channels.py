"""Channels to resident servers: one job's message out, its replies back.

A channel is a connection of an ``rpc`` pool (the client's, or a group leader's
worker's) opened by the servers' channel op and kept open between jobs: after a
job's ``done`` it goes back to the idle list of its address. Both the client and
the group leaders send their jobs through :func:`serve_job`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from distributed.comm import CommClosedError
from distributed.protocol import pickle, serialize
from distributed.protocol.serialize import Serialized

__all__ = ["CHANNEL_OP", "Channel", "job_message", "read_job", "serve_job", "shared"]

CHANNEL_OP = "coded_resident_channel"


def shared(value: Any) -> Serialized:
    """Serialize `value` once, for the many messages that carry it."""
    return Serialized(*serialize(value))


def job_message(job: object, right: Serialized) -> dict[str, Any]:
    """Return a job's message: the job pickled in one frame, `right` as serialized.

    A job is small: pickled whole (its few arrays in band) it travels in one
    frame, where Dask's serialization would give each array a frame of its own
    (about 0.5 ms a job instead of 0.1 ms).
    """
    return {"job": pickle.dumps(job), "right": right}


def read_job(job: bytes) -> Any:
    """Return the job of a message written by :func:`job_message`."""
    return pickle.loads(job)


@dataclass(slots=True, eq=False)
class Channel:
    """One job's connection while it runs, and the message that stops the job."""

    address: str
    call_id: str
    token: int  # the job's number on its sender
    comm: Any = None
    stopped: bool = False  # no result of the job is wanted any more
    stop_sent: bool = False  # the stop is written (exactly once)

    async def send_stop(self) -> None:
        """Write the stop, once, while the job runs (else: once it is sent)."""
        if self.comm is None or self.stop_sent:
            return
        self.stop_sent = True
        with contextlib.suppress(OSError, CommClosedError):
            await self.comm.write({"stop": self.token, "call": self.call_id})


async def serve_job(
    connect: Callable[[str], Any],
    idle: list[Any],
    channel: Channel,
    message: dict[str, Any],
    patience: float,
    on_reply: Callable[[dict[str, Any]], None],
) -> str | None:
    """Send `message` on an idle channel of ``channel.address``; hand on its replies.

    Parameters
    ----------
    connect : callable
        ``await connect(address)`` opens a new connection (an rpc pool's).
    idle : list
        The address's idle connections: one is taken, and given back after the
        job's ``done``.
    channel : Channel
        Holds the connection while the job runs; one stopped before the job
        was written gets its stop right after.
    message : dict
        The job (``{"job": ..., "right": ...}``).
    patience : float
        Seconds the job may take, replies included.
    on_reply : callable
        Called with every reply, the last one holding ``"done"``.

    Returns
    -------
    str or None
        None when the job ended with its done, else why it ended without.
    """
    address = channel.address
    try:
        async with asyncio.timeout(patience):
            while idle and channel.comm is None:
                comm = idle.pop()
                channel.comm = None if comm.closed() else comm
            if channel.comm is None:  # a new channel: the op opens it
                channel.comm = await connect(address)
                # (de)serialized in the loop: jobs are small (B is serialized
                # once, results are arrays); deciding to offload walked every
                # message with dask's sizeof, and offloading cost a thread hop
                channel.comm.allow_offload = False
                message = {**message, "op": CHANNEL_OP}
            await channel.comm.write(message)
            if channel.stopped:
                await channel.send_stop()
            while True:
                reply = await channel.comm.read()
                if not isinstance(reply, dict):  # an old worker: no handler
                    return f"{address} runs no resident server"
                on_reply(reply)
                if "done" in reply:
                    break
        idle.append(channel.comm)
        channel.comm = None
        return None
    except (OSError, CommClosedError) as error:
        return f"its Dask worker {address} closed the connection ({error})"
    except TimeoutError:
        return f"its Dask worker {address} stopped answering"
    finally:
        if channel.comm is not None:  # broken or abandoned: never reused
            channel.comm.abort()
            channel.comm = None
