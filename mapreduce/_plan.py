r"""Shuffle plans for any placement: coded (XOR multicasts) or uncoded, and a verifier.

A *value* is the intermediate output of one file's map for one reducer node
(``Q = K`` reduce functions, one per node, ``s = 1``). A demand is (receiver ``k``,
file ``f``) with ``k`` not storing ``f``. The coded planner groups demands by
``S = storers(f) | {k}`` and runs Li et al.'s multicast inside each group with
unequal demand sizes (docs/theory/mapreduce.md, general planner).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from mapreduce._errors import PlanVerificationError
from mapreduce._placement import Placement

__all__ = ["Packet", "Segment", "ShufflePlan", "plan_shuffle", "verify_plan"]


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class Segment:
    """Segment `index` of `count` equal segments of the value (`file`, `receiver`).

    Parameters
    ----------
    receiver : int
        Node that needs the value (it runs that reduce function).
    file : int
        File whose map output it is.
    index, count : int
        ``0 <= index < count``; the value's bytes are split into `count` parts.
    """

    receiver: int
    file: int
    index: int = 0
    count: int = 1

    @property
    def size(self) -> Fraction:
        """Length in values (``1 / count``)."""
        return Fraction(1, self.count)


@dataclass(frozen=True, slots=True, kw_only=True)
class Packet:
    """One transmission: `sender` sends the XOR of `segments`, one per receiver.

    Parameters
    ----------
    sender : int
        Node that builds and sends the packet.
    segments : tuple of Segment
        The XORed pieces, at most one per receiver.
    """

    sender: int
    segments: tuple[Segment, ...]

    @property
    def receivers(self) -> tuple[int, ...]:
        """Nodes that decode a segment from this packet."""
        return tuple(segment.receiver for segment in self.segments)

    @property
    def size(self) -> Fraction:
        """Length in values: the longest XORed segment (shorter ones are padded)."""
        return max(segment.size for segment in self.segments)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShufflePlan:
    r"""A shuffle: the packets that deliver every missing value of a placement.

    Parameters
    ----------
    placement : Placement
        Which nodes store each file.
    packets : tuple of Packet
        The transmissions.
    is_coded : bool
        Whether packets XOR several segments (False: plain unicasts).
    reducers : tuple of int, optional
        Nodes whose reduce function is served (default: all ``K``); the others'
        values are not shuffled (a lost node's partition is reduced elsewhere).
    demands : frozenset of (int, int), optional
        The (receiver, file) values to deliver, when not every missing one is
        needed (coded files of an MDS code: any ``N`` of them serve).

    Notes
    -----
    With ``Q = K`` reduce functions of ``T`` bits per file, the paper-model load
    counts every packet once (a multicast reaches all its receivers):

    .. math:: L = \frac{\sum_{\text{packets}} \text{size}}{K N}

    The unicast-equivalent load counts a packet once per receiver, as a network
    without multicast (Dask) carries it.
    """

    placement: Placement
    packets: tuple[Packet, ...]
    is_coded: bool
    reducers: tuple[int, ...] | None = None
    demands: frozenset[tuple[int, int]] | None = None

    @property
    def receivers(self) -> tuple[int, ...]:
        """Nodes whose missing values the plan delivers."""
        return (
            tuple(range(self.placement.K)) if self.reducers is None else self.reducers
        )

    @property
    def load(self) -> Fraction:
        """Paper-model communication load (bits sent over ``Q N T``)."""
        total = sum((packet.size for packet in self.packets), Fraction(0))
        return total / (self.placement.K * self.placement.N)

    @property
    def unicast_load(self) -> Fraction:
        """Load when each packet is sent separately to each of its receivers."""
        total = sum(
            (packet.size * len(packet.segments) for packet in self.packets),
            Fraction(0),
        )
        return total / (self.placement.K * self.placement.N)

    @property
    def load_values(self) -> Fraction:
        """Paper-model load in values (``T`` bits each): ``load * K * N``."""
        return self.load * self.placement.K * self.placement.N


def _demands(
    placement: Placement, reducers: tuple[int, ...] | None = None
) -> list[tuple[int, int]]:
    """Every (receiver, file) pair with the receiver not storing the file."""
    receivers = range(placement.K) if reducers is None else reducers
    return [
        (k, f)
        for f, nodes in enumerate(placement.storers)
        for k in receivers
        if k not in nodes
    ]


def _plan_uncoded(placement: Placement, demands: list[tuple[int, int]]) -> list[Packet]:
    """One unicast of a whole value per demand, uploads balanced between storers.

    Greedy least-busy storer first; then a demand moves from its sender ``s`` to
    another storer ``t`` while ``sent[s] > sent[t] + 1`` (each move lowers
    ``sum(sent^2)``, so this stops), leaving no such move.
    """
    sent = [0] * placement.K
    senders = []
    for _, f in demands:
        sender = min(placement.storers[f], key=lambda s: (sent[s], s))
        sent[sender] += 1
        senders.append(sender)
    moved = True
    while moved:
        moved = False
        for i, (_, f) in enumerate(demands):
            s = senders[i]
            t = min(placement.storers[f], key=lambda n: (sent[n], n))
            if sent[s] > sent[t] + 1:
                sent[s], sent[t], senders[i], moved = sent[s] - 1, sent[t] + 1, t, True
    return [
        Packet(sender=s, segments=(Segment(receiver=k, file=f),))
        for (k, f), s in zip(demands, senders, strict=True)
    ]


def _group_transmissions(g: int, sizes: dict[int, int]) -> tuple[int, int]:
    """Fewest segments per value and transmissions for one group.

    With values cut in ``c`` segments, ``P_c = max(c max n, ceil(c sum n / g))``
    transmissions suffice (each serves up to ``g`` receivers, one segment each, and
    never its sender). The least load ``P_c / c`` is reached at ``c = g``; return
    the smallest ``c`` that reaches it, with its ``P_c``.
    """
    largest, total = max(sizes.values()), sum(sizes.values())

    def transmissions(c: int) -> int:
        return max(c * largest, -(-c * total // g))

    best = Fraction(transmissions(g), g)
    c = next(c for c in range(1, g + 1) if Fraction(transmissions(c), c) == best)
    return c, transmissions(c)


def _plan_group(members: tuple[int, ...], wants: dict[int, list[int]]) -> list[Packet]:
    """Li's multicast inside one group `members` with demand lists `wants`.

    Every member other than ``k`` stores every file of ``wants[k]``, so any of them
    can send a segment of it, and every other receiver can cancel it.
    """
    g = len(members) - 1
    sizes = {k: len(wants.get(k, ())) for k in members}
    c, P = _group_transmissions(g, sizes)
    senders: list[int] = []
    for s in members:  # p_s <= P - c n_s keeps enough slots for receiver s
        senders += [s] * min(P - c * sizes[s], P - len(senders))
    slots: list[list[Segment]] = [[] for _ in range(P)]
    for k in members:
        pieces = [
            Segment(receiver=k, file=f, index=i, count=c)
            for f in wants.get(k, ())
            for i in range(c)
        ]
        eligible = (t for t in range(P) if senders[t] != k)
        for piece, t in zip(pieces, eligible, strict=False):
            slots[t].append(piece)
    return [
        Packet(sender=senders[t], segments=tuple(slots[t]))
        for t in range(P)
        if slots[t]
    ]


Groups = dict[frozenset[int], dict[int, list[int]]]


def _new_groups() -> Groups:
    return defaultdict(lambda: defaultdict(list))


def _li_groups(placement: Placement, demands: list[tuple[int, int]]) -> Groups:
    """Demands grouped by ``S = storers(f) | {k}`` (Li et al.)."""
    groups = _new_groups()
    for k, f in demands:
        groups[placement.storers[f] | {k}][k].append(f)
    return groups


def _design_groups(placement: Placement, demands: list[tuple[int, int]]) -> Groups:
    """Demands grouped by a design's classes (Woolsey et al.'s hypercube).

    Demand ``(k, f)`` with ``k`` in class ``d`` joins the ``r`` nodes made of
    ``k`` and the storers of ``f`` outside class ``d``: each other member stores
    ``f``, and the group has one member per class.
    """
    class_of = {k: d for d, nodes in enumerate(placement.classes) for k in nodes}
    groups = _new_groups()
    for k, f in demands:
        others = {s for s in placement.storers[f] if class_of[s] != class_of[k]}
        groups[frozenset(others | {k})][k].append(f)
    return groups


def _plan_groups(groups: Groups) -> list[Packet]:
    packets = []
    for members in sorted(groups, key=lambda S: (len(S), sorted(S))):
        packets += _plan_group(tuple(sorted(members)), groups[members])
    return packets


def _plan_coded(placement: Placement, demands: list[tuple[int, int]]) -> list[Packet]:
    """Plan by Li's grouping and, for a design, its own; keep the lighter."""
    candidates = [_plan_groups(_li_groups(placement, demands))]
    if placement.classes is not None and len(placement.classes) >= 2:
        candidates.append(_plan_groups(_design_groups(placement, demands)))
    return min(candidates, key=lambda ps: (sum(p.size for p in ps), len(ps)))


def plan_shuffle(
    placement: Placement,
    *,
    coded: bool = True,
    reducers: Iterable[int] | None = None,
) -> ShufflePlan:
    r"""Plan the shuffle of a placement: who sends which XOR of which segments.

    Parameters
    ----------
    placement : Placement
        Which nodes store (and map) each file.
    coded : bool
        Coded multicasts (default) or one unicast per missing value.
    reducers : iterable of int, optional
        Serve only these nodes' reduce functions (default: all).

    Returns
    -------
    ShufflePlan
        Packets that deliver every value a node lacks exactly once (see
        :func:`verify_plan`).

    Raises
    ------
    TypeError
        If `placement` is not a :class:`Placement`.
    ValueError
        If a reducer is outside ``range(K)``.

    Notes
    -----
    Demands ``(k, f)`` are grouped by :math:`S = \mathrm{storers}(f) \cup \{k\}`;
    every other member of ``S`` stores ``f``. With ``g = |S| - 1`` and ``n_k``
    demands of member ``k``, the group sends

    .. math:: \max\Big(\max_k n_k,\ \frac{1}{g}\sum_k n_k\Big)

    values: values are cut into ``g`` segments, each transmission XORs one
    segment for each of up to ``g`` receivers (never its sender). On Li's
    placement with equal batches this gives :math:`\frac{1}{r}(1 - \frac{r}{K})`;
    on the ``K = 3`` placement it is the LP of Kiamari et al. A placement with
    design `classes` (the hypercube) is also planned with the design's groups of
    one node per class (Woolsey et al.), and the lighter plan is kept: on the
    hypercube, :math:`\frac{1}{r-1}(1 - \frac{r}{K})` for ``r >= 3``.

    References
    ----------
    .. [1] S. Li, M. A. Maddah-Ali, Q. Yu, A. S. Avestimehr, "A Fundamental
       Tradeoff Between Computation and Communication in Distributed Computing",
       IEEE Trans. Inf. Theory 64(1), 2018.
    .. [2] M. Kiamari, C. Wang, A. S. Avestimehr, "On Heterogeneous Coded
       Distributed Computing", IEEE GLOBECOM, 2017.
    .. [3] N. Woolsey, R.-R. Chen, M. Ji, "A New Combinatorial Design of Coded
       Distributed Computing", IEEE ISIT, 2018.

    Examples
    --------
    >>> from mapreduce import place_li
    >>> plan = plan_shuffle(place_li(4, 2))
    >>> plan.load, plan_shuffle(place_li(4, 2), coded=False).load
    (Fraction(1, 4), Fraction(1, 2))
    """
    if not isinstance(placement, Placement):
        raise TypeError(
            f"`placement` must be a Placement, got {type(placement).__name__}."
        )
    chosen = None
    if reducers is not None:
        chosen = tuple(sorted({int(k) for k in reducers}))
        if any(not 0 <= k < placement.K for k in chosen):
            raise ValueError(
                f"`reducers` must be nodes in range(K), K={placement.K}, got {chosen}."
            )
    demands = _demands(placement, chosen)
    packets = (_plan_coded if coded else _plan_uncoded)(placement, demands)
    return ShufflePlan(
        placement=placement, packets=tuple(packets), is_coded=coded, reducers=chosen
    )


def _check_packet(number: int, packet: Packet, placement: Placement) -> None:
    """Raise unless the sender can build `packet` and each receiver can decode it."""
    storers = placement.storers
    where = f"packet {number} (sender {packet.sender})"
    if not packet.segments:
        raise PlanVerificationError(f"{where} carries no segment.")
    if len(set(packet.receivers)) != len(packet.segments):
        raise PlanVerificationError(f"{where} has two segments for one receiver.")
    for seg in packet.segments:
        if not (0 <= seg.receiver < placement.K and 0 <= seg.file < placement.N):
            raise PlanVerificationError(f"{where}: {seg} is outside the placement.")
        if not 0 <= seg.index < seg.count:
            raise PlanVerificationError(f"{where}: {seg} has index outside count.")
        if packet.sender not in storers[seg.file]:
            raise PlanVerificationError(
                f"{where}: the sender does not store file {seg.file}."
            )
    for k in packet.receivers:
        unknown = [seg for seg in packet.segments if k not in storers[seg.file]]
        if [seg.receiver for seg in unknown] != [k]:
            raise PlanVerificationError(
                f"{where}: receiver {k} cannot decode it; it lacks the files of "
                f"{unknown}."
            )


def verify_plan(plan: ShufflePlan) -> ShufflePlan:
    """Check that every receiver decodes exactly the values it lacks, none twice.

    Parameters
    ----------
    plan : ShufflePlan
        The plan to check.

    Returns
    -------
    ShufflePlan
        `plan`, unchanged.

    Raises
    ------
    PlanVerificationError
        If a sender does not store a file it encodes, a receiver cannot cancel
        every other segment of a packet from its own files, a segment reaches a
        node that stores its file, or a missing value is not covered exactly once
        by its segments.

    Notes
    -----
    A receiver decodes a packet when every segment but its own comes from a file
    it stores (its side information); its own segment is then the XOR of the
    packet with the re-encoded others. The decoded segments of each value must
    tile ``[0, 1)`` exactly.

    Examples
    --------
    >>> from mapreduce import place_li, plan_shuffle
    >>> verify_plan(plan_shuffle(place_li(5, 2))).load
    Fraction(3, 10)
    """
    placement = plan.placement
    received: dict[tuple[int, int], list[tuple[Fraction, Fraction]]] = defaultdict(list)
    for number, packet in enumerate(plan.packets):
        _check_packet(number, packet, placement)
        for seg in packet.segments:
            start = Fraction(seg.index, seg.count)
            received[seg.receiver, seg.file].append((start, start + seg.size))
    demands = (
        set(_demands(placement, plan.reducers))
        if plan.demands is None
        else set(plan.demands)
    )
    stray = sorted(set(received) - demands)
    if stray:
        raise PlanVerificationError(
            f"value (receiver {stray[0][0]}, file {stray[0][1]}) is sent but not "
            "needed: the receiver stores the file or is not a reducer."
        )
    missing = demands - set(received)
    if missing:
        raise PlanVerificationError(
            f"{len(missing)} missing values are never sent, e.g. (receiver, file) = "
            f"{min(missing)}."
        )
    for (k, f), intervals in received.items():
        end = Fraction(0)
        for start, stop in sorted(intervals):
            if start != end:
                raise PlanVerificationError(
                    f"value (receiver {k}, file {f}) is covered "
                    f"{'twice' if start < end else 'with a gap'} at {start}."
                )
            end = stop
        if end != 1:
            raise PlanVerificationError(
                f"value (receiver {k}, file {f}) is covered up to {end}, not 1."
            )
    return plan
