"""Fair share: decayed usage and Slurm's Fair Tree factor, as pure functions.

We implement Fair Tree, the default of ``priority/multifactor`` since Slurm
19.05 (the classic ``2^(-U/S)`` needs ``PriorityFlags=NO_FAIR_TREE``,
which we do not offer). For each association, among its siblings:

* S = its raw shares / the raw shares of it and its siblings (NormShares);
* U = its raw usage / the raw usage of it and its siblings (EffectvUsage);
* Level FS = S / U, infinite with no usage.

The tree is walked depth first, siblings in descending Level FS; each user
reached takes the next rank, counting down from the number of users, and
its factor is rank / users. Siblings with equal Level FS tie: tied users
share a rank, tied accounts have their children ranked together, and a
user tied with an account shares its rank with that account's first user.
So every user under an account of higher Level FS ranks above every user
under a sibling of lower Level FS, and with no usage anywhere every
user's factor is 1.

Usage is charged per second of allocated TRES (``TRESBillingWeights``;
CPUs alone when none are set) and decays with ``PriorityDecayHalfLife``.

Imports minislurm.accounts only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from minislurm.accounts import ROOT, Assoc, Book

Key = tuple[str, str]


def decayed(usage: float, elapsed: float, half_life: float) -> float:
    """Usage after ``elapsed`` seconds of decay.

    Args:
        usage: the usage now.
        elapsed: seconds passed.
        half_life: PriorityDecayHalfLife in seconds (0: no decay).

    Returns:
        ``usage * 2^(-elapsed/half_life)``.
    """
    if half_life <= 0 or elapsed <= 0:
        return usage
    return float(usage * 2.0 ** (-elapsed / half_life))


def parse_billing_weights(text: str) -> dict[str, float]:
    """Parse ``TRESBillingWeights`` ("CPU=1.0,Mem=0.25G,GRES/gpu=2.0").

    Args:
        text: the partition's setting ("" for none).

    Returns:
        Lower-case TRES name ("cpu", "mem", "gres/gpu", "node") to weight; memory per GiB.

    Raises:
        ValueError: a malformed item.
    """
    weights: dict[str, float] = {}
    for item in filter(None, text.split(",")):
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"Invalid TRESBillingWeights item '{item}'")
        if name.lower() == "mem" and value[-1:].upper() in ("G", "M", "T"):
            per = {"M": 1024.0, "G": 1.0, "T": 1 / 1024}[value[-1].upper()]
            weights["mem"] = float(value[:-1]) * per
        else:
            weights[name.lower()] = float(value)
    return weights


def billing(cpus: int, mem_mb: int, gpus: int, nodes: int, weights: dict[str, float]) -> float:
    """The billing TRES of an allocation: what one second of it charges.

    Args:
        cpus: allocated CPUs.
        mem_mb: allocated memory, MiB.
        gpus: allocated GPUs.
        nodes: allocated nodes.
        weights: parsed TRESBillingWeights (empty: CPUs alone, as in Slurm).

    Returns:
        The weighted sum.
    """
    if not weights:
        return float(cpus)
    return (
        weights.get("cpu", 0.0) * cpus
        + weights.get("mem", 0.0) * mem_mb / 1024.0
        + weights.get("gres/gpu", 0.0) * gpus
        + weights.get("node", 0.0) * nodes
    )


@dataclass(frozen=True)
class ShareRow:
    """One line of sshare: an association and its fair-share figures."""

    assoc: Assoc
    depth: int
    raw_usage: float  # its own and everything below it
    norm_shares: float  # S among siblings (0 for root)
    norm_usage: float  # raw usage / the root's
    effective_usage: float  # U among siblings (1 for root)
    level_fs: float  # S / U; inf with no usage
    fairshare: float  # users only; 0 for accounts


def subtree_usage(book: Book, usage: dict[Key, float]) -> dict[Key, float]:
    """Each association's raw usage with everything below it.

    Args:
        book: the associations.
        usage: raw usage charged to user associations.

    Returns:
        Usage by association key.
    """
    totals = {key: 0.0 for key in book.assocs}
    for key, amount in usage.items():
        assoc = book.assocs.get(key)
        if assoc is None:
            continue
        totals[key] += amount
        for above in book.ancestors(assoc):
            totals[above.key] += amount
    return totals


def level_fs(shares: float, usage: float) -> float:
    """Level FS from sibling-normalised shares and usage.

    Args:
        shares: S.
        usage: U.

    Returns:
        S / U; infinity when U is 0 (0 when S is 0 too).
    """
    if usage <= 0:
        return math.inf if shares > 0 else 0.0
    return shares / usage


def fair_tree(book: Book, usage: dict[Key, float]) -> list[ShareRow]:
    """Every association's figures, in sshare's order (depth first, users before accounts).

    Args:
        book: the associations.
        usage: raw usage charged to user associations.

    Returns:
        The rows; a user's ``fairshare`` is its Fair Tree factor in (0, 1].
    """
    totals = subtree_usage(book, usage)
    root_usage = totals.get((ROOT, ""), 0.0)
    figures: dict[Key, tuple[float, float, float]] = {}  # S, U, LF
    kids: dict[Key, list[Assoc]] = {}
    order: list[tuple[Assoc, int]] = []

    def visit(assoc: Assoc, depth: int) -> None:
        order.append((assoc, depth))
        if assoc.user:
            return
        children = book.children(assoc.account)
        kids[assoc.key] = children
        share_sum = sum(c.shares for c in children)
        use_sum = sum(totals[c.key] for c in children)
        for child in children:
            s = child.shares / share_sum if share_sum else 0.0
            u = totals[child.key] / use_sum if use_sum else 0.0
            figures[child.key] = (s, u, level_fs(s, u))
            visit(child, depth + 1)

    root = book.assocs[(ROOT, "")]
    visit(root, 0)
    factors = _rank(kids, figures, root)
    rows = []
    for assoc, depth in order:
        s, u, lf = figures.get(assoc.key, (0.0, 1.0, 0.0))
        raw = totals[assoc.key]
        rows.append(
            ShareRow(
                assoc,
                depth,
                raw,
                s,
                raw / root_usage if root_usage else 0.0,
                u,
                lf,
                factors.get(assoc.key, 0.0),
            )
        )
    return rows


def _rank(
    kids: dict[Key, list[Assoc]], figures: dict[Key, tuple[float, float, float]], root: Assoc
) -> dict[Key, float]:
    """Rank the users depth first by Level FS; factor = rank / number of users.

    Ties as the Fair Tree documentation has them: sibling users with equal
    Level FS share a rank; sibling accounts with equal Level FS have their
    children merged and ranked together; a user tied with a sibling account
    shares its rank with that account's highest-ranked user.
    """
    users = sum(1 for children in kids.values() for c in children if c.user)
    factors: dict[Key, float] = {}
    left = users  # the rank of the next user reached

    def walk(level: list[Assoc], tied_rank: int | None) -> None:
        nonlocal left
        ordered = sorted(level, key=lambda a: -figures[a.key][2])
        i = 0
        while i < len(ordered):
            lf = figures[ordered[i].key][2]
            tied = [a for a in ordered[i:] if _same(figures[a.key][2], lf)]
            rank = tied_rank if i == 0 and tied_rank is not None else left
            i += len(tied)
            for user in (a for a in tied if a.user):
                factors[user.key] = rank / users
                left -= 1
            merged = [c for a in tied if not a.user for c in kids.get(a.key, [])]
            if merged:
                walk(merged, rank)

    walk(kids.get(root.key, []), None)
    return factors


def _same(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-12)
