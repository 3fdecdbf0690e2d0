"""The claim and lease SQL of the results store (``claims`` table: run key, owner, lease
expiry), used by :mod:`dropedge_explorer.sweep_workers`, which runs the workers' loop.

Sweep workers claim a run before training it (:meth:`Claims.claim`, atomic: SQLite
``BEGIN IMMEDIATE``, PostgreSQL ``INSERT ... ON CONFLICT DO UPDATE ... WHERE expired``),
renew the lease while training (:meth:`Claims.renew`) and drop the claim in the
transaction that stores the run (:meth:`ResultStore.put`), so N workers split a grid and
no run is trained twice; a claim whose worker died expires and is taken over. Leases are
compared on the server's clock when there is a server (workers on several machines).
"""
from __future__ import annotations

import time

import sqlalchemy as sa


class Claims:
    """The claim methods of :class:`~dropedge_explorer.store.ResultStore` (a mixin: it uses
    the store's ``_tx``, ``_insert``, ``_key``, ``_runs``, ``_claims`` and ``is_server``)."""

    def _now(self, conn: sa.Connection) -> float:
        """Seconds since the epoch, on the server's clock when there is a server."""
        if self.is_server:
            return float(conn.execute(sa.text("SELECT EXTRACT(EPOCH FROM clock_timestamp())")).scalar())
        return time.time()

    def claim(self, key_or_config, owner: str, lease: float) -> bool:
        """Claim one run for ``owner`` for ``lease`` seconds; ``True`` when this worker may
        train it: the run is not stored, and nobody else holds a live claim on it (an
        expired claim — its worker died — is taken over). Atomic: one transaction, the
        insert-or-take-over is a single upsert whose ``WHERE`` only matches an expired
        claim or the owner's own."""
        key = self._key(key_or_config)
        claims = self._claims
        with self._tx(write=True) as conn:
            now = self._now(conn)
            insert = self._insert(claims).values(key=key, owner=owner, claimed_at=now, expires_at=now + lease)
            upsert = insert.on_conflict_do_update(
                index_elements=[claims.c.key],
                set_={"owner": insert.excluded.owner, "claimed_at": insert.excluded.claimed_at,
                      "expires_at": insert.excluded.expires_at},
                where=(claims.c.expires_at < now) | (claims.c.owner == owner)).returning(claims.c.owner)
            if conn.execute(upsert).first() is None:
                return False  # a live claim of another worker
            # checked after the claim: a worker storing this run right now holds the claim
            # row until it commits, so by here its run is visible
            if conn.execute(sa.select(self._runs.c.key).where(self._runs.c.key == key)).first():
                conn.execute(sa.delete(claims).where(claims.c.key == key))
                return False
        return True

    def renew(self, key: str, owner: str, lease: float) -> bool:
        """Extend ``owner``'s claim on ``key`` by ``lease`` seconds from now; ``False`` when
        the claim is no longer ``owner``'s (it expired and another worker took it)."""
        claims = self._claims
        with self._tx(write=True) as conn:
            now = self._now(conn)
            done = conn.execute(sa.update(claims).where(claims.c.key == key, claims.c.owner == owner)
                                .values(expires_at=now + lease)).rowcount
        return done == 1

    def release(self, key: str, owner: str) -> None:
        """Drop ``owner``'s claim on ``key`` (a run not stored: another worker may take it)."""
        claims = self._claims
        with self._tx(write=True) as conn:
            conn.execute(sa.delete(claims).where(claims.c.key == key, claims.c.owner == owner))

    def claims(self) -> list[dict]:
        """The claims now held: ``key``, ``owner``, ``claimed_at``, ``expires_at`` and
        ``expired`` (seconds since the epoch, on the store's clock)."""
        with self._tx() as conn:
            now = self._now(conn)
            rows = conn.execute(sa.select(self._claims).order_by(self._claims.c.claimed_at)).all()
        return [{**dict(r._mapping), "expired": r.expires_at < now} for r in rows]


