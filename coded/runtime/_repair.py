"""Erasure repair of a placement, on the cluster: lost shares rebuilt from live ones.

Shares whose results failed their checks (suspects) are rebuilt the same way,
from the other shares, on other Dask workers.

A lost coded share is recomputed by a task on a live worker from any decodable set
of surviving shares (``Code.repair``: ``share_i = G_i G_S^{-1} shares_S``); Dask
moves the surviving shares worker to worker, and the client never holds A. A
rebuilt share is a finished task whose inputs are the surviving shares: it stays in
memory when a worker holding one of them dies (only cancelling an input by hand
would cancel it).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from distributed import Client, Future, wait

from coded.codes import Code
from coded.errors import NotEnoughResultsError
from coded.runtime._dask_helpers import live_addresses
from coded.runtime._state import tolerance

__all__ = ["lost_shares", "repair_shares"]


def _rebuild(code: Code, worker: int, survivors: list[int], *shares: Any) -> Any:
    """Worker side: the share of code worker `worker` from the `survivors`' shares."""
    return code.repair(dict(zip(survivors, shares, strict=True)), [worker])[worker]


def lost_shares(
    shares: Sequence[Future | None], addresses: Sequence[str], alive: set[str]
) -> dict[int, str]:
    """Code worker -> why its share is lost (never placed, dropped, worker gone)."""
    lost = {}
    for i, (share, address) in enumerate(zip(shares, addresses, strict=True)):
        if share is None:
            lost[i] = f"its share never reached {address}"
        elif address not in alive:
            lost[i] = f"its Dask worker {address} left the cluster"
        elif share.status != "finished":
            lost[i] = f"its share on {address} was lost ({share.status})"
    return lost


def _decodable_survivors(code: Code, live: list[int]) -> list[int]:
    """Return the shortest prefix of `live` that decodes (fewest shares to move)."""
    for count in range(1, len(live) + 1):
        if code.is_decodable(live[:count]):
            return live[:count]
    return []


def _targets(
    lost: list[int], addresses: Sequence[str], live: list[int], alive: set[str]
) -> dict[int, str]:
    """Return where each rebuilt share goes (code worker -> address).

    Workers holding no share of the placement first (fault independence), then
    the live holders with the fewest shares. The workers of lost shares come
    last: the scheduler may still list a worker that has just died.
    """
    suspect = {addresses[i] for i in lost}
    load = dict.fromkeys(sorted(alive - suspect) or sorted(alive), 0)
    for j in live:
        if addresses[j] in load:
            load[addresses[j]] += 1
    targets = {}
    for i in lost:
        targets[i] = min(load, key=lambda address: (load[address], address))
        load[targets[i]] += 1
    return targets


def repair_shares(
    client: Client,
    code: Code,
    shares: Sequence[Future | None],
    addresses: Sequence[str],
    *,
    key_prefix: str,
    timeout: float,
    suspects: Mapping[int, str] | None = None,
) -> tuple[dict[int, Future], dict[int, str]]:
    """Rebuild every lost (or suspect) share of a placement on live workers.

    Parameters
    ----------
    client : distributed.Client
        The placement's client.
    code : Code
        The placement's row code (a :class:`~coded.codes.UnitCode`).
    shares : sequence of Future or None
        The placement's share of each code worker (None if never placed).
    addresses : sequence of str
        The Dask worker of each share.
    key_prefix : str
        Prefix of the rebuilt shares' keys.
    timeout : float
        Seconds to wait for the rebuilt shares.
    suspects : mapping of int to str, optional
        Code workers whose results failed their checks (and why): their shares
        are rebuilt like lost ones, from the others, on other Dask workers.

    Returns
    -------
    futures : dict of int to Future
        The rebuilt share of each repaired code worker.
    new_addresses : dict of int to str
        Where each rebuilt share lives.

    Raises
    ------
    NotEnoughResultsError
        Too few shares survive to decode (the placement must be placed again),
        or a rebuild failed or did not finish within `timeout`.
    """
    alive = live_addresses(client)
    lost = {**lost_shares(shares, addresses, alive), **(suspects or {})}
    live = [j for j in range(len(shares)) if j not in lost]
    survivors = _decodable_survivors(code, live)
    if not survivors:
        details = "; ".join(f"worker {i}: {why}" for i, why in lost.items())
        raise NotEnoughResultsError(
            f"cannot repair the placement: the {len(live)} surviving shares do "
            f"not decode. The code tolerates {tolerance(code)} lost of "
            f"{len(shares)} shares; lost {len(lost)}: {details}. Place A again.",
            lost_workers=lost,
            tolerance=tolerance(code),
        )
    targets = _targets(sorted(lost), addresses, live, alive)
    tag = uuid.uuid4().hex[:8]
    futures = {
        i: client.submit(
            _rebuild,
            code,
            i,
            survivors,
            *(shares[j] for j in survivors),
            key=f"{key_prefix}-{i}-repair-{tag}",
            workers=[target],
            allow_other_workers=False,
            retries=0,
        )
        for i, target in targets.items()
    }
    with contextlib.suppress(TimeoutError):  # unfinished ones are reported below
        wait(list(futures.values()), timeout=timeout)
    failed = {
        i: repr(f.exception()) if f.status == "error" else f.status
        for i, f in futures.items()
        if f.status != "finished"
    }
    if failed:
        client.cancel(list(futures.values()), force=True)
        raise NotEnoughResultsError(
            f"repairing workers {sorted(failed)} did not succeed within {timeout} s "
            f"({failed}); the placement keeps its {len(live)} live shares.",
            lost_workers=lost,
            tolerance=tolerance(code),
        )
    return futures, targets
