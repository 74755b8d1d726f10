"""The PostgreSQL backend of a live experiment's store: many experiments in one database, each
in a schema of its own, ``bk_<name>``, holding :mod:`banditkit.live.store.schema`'s tables in
PostgreSQL's types (BIGINT, DOUBLE PRECISION, BYTEA), through psycopg 3.

What the guarantees of ``docs/experiment.md`` rest on here:

- one transaction per call: each call runs between ``BEGIN`` and ``COMMIT`` on a connection in
  autocommit mode (so nothing opens a transaction behind the experiment's back);
- several processes (servers on several machines) on one experiment: a writing call's first
  statement takes the row lock of the experiment's ``meta`` row ``'created'``
  (``SELECT ... FOR UPDATE``), held to its commit, so the writers of one experiment run one
  after another; the transaction is READ COMMITTED, so each statement after the lock sees every
  call committed before it (REPEATABLE READ would keep the snapshot taken before the wait).
  Writers of other experiments never wait on it. A writer waits at most 30 s
  (``lock_timeout``), then the call is refused;
- ``kill -9``: the server rolls back the open transaction of a connection that goes away, and
  a commit is durable once it returns (the server's ``fsync``/``synchronous_commit``);
- read-only open: ``default_transaction_read_only``, and each call one REPEATABLE READ READ
  ONLY transaction (one snapshot, no lock); the server refuses any write;
- an experiment deleted or replaced (its schema dropped, created again) while open: the value
  of ``'created'`` read with the lock differs from the one read at open, and the call is refused.

Connections: an experiment opened alone holds one connection of its own. A process serving
many experiments (``banditkit serve``) calls :func:`use_pool` first: every experiment of that
URL then borrows a connection of one shared pool (psycopg_pool) for each transaction and gives
it back at its end, so the sessions a process holds are bounded by the pool's size, not by its
experiments. The schema is then chosen inside each transaction (``SET LOCAL search_path``, sent
in the same round trip as ``BEGIN`` and the lock), so a pooled connection carries nothing of
one experiment into the next.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import ExperimentError, ExperimentExists, ExperimentNotFound
from .base import NAME_PATTERN, Store, check_format
from .pg_bulk import bulk_statements
from .schema import FORMAT, POSTGRES_TYPES, schema

__all__ = ["DatabaseUnreachable", "PostgresStore", "drop", "list_names", "pool_of",
           "schema_name", "use_pool"]


class DatabaseUnreachable(ExperimentError):
    """The database cannot be reached (refused, down, no connection free in time): nothing of
    the call ran, so it may be tried again."""


_LOCK_TIMEOUT_S = 30
_CONNECT_TIMEOUT_S = 10
_PREFIX = "bk_"


def schema_name(name: str) -> str:
    """The schema holding experiment ``name`` (a name checked by ``NAME_PATTERN``)."""
    return _PREFIX + name


def _quoted(identifier: str) -> str:
    # names are checked against NAME_PATTERN (no quote can appear), so quoting is exact
    return '"' + identifier.replace('"', '""') + '"'


def safe_url(url: str) -> str:
    """``url`` without its password (in the authority or libpq's ``?password=``), for
    messages."""
    parts = urlsplit(url)
    if parts.password is not None:
        host = parts.netloc.rsplit("@", 1)[1]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if "password=" in parts.query:
        query = [(k, "***" if k == "password" else v) for k, v in parse_qsl(parts.query)]
        parts = parts._replace(query=urlencode(query, safe="/*"))
    return urlunsplit(parts)


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the extra is installed by make test
        raise ExperimentError("a postgresql:// URL needs psycopg: pip install "
                              "'banditkit[postgres]'") from None
    return psycopg


def _number(data: Any) -> int | float:
    text = bytes(data).decode()
    try:
        return int(text)
    except ValueError:
        return float(text)


def _loader_class() -> type:
    from psycopg.adapt import Loader

    class NumberLoader(Loader):
        def load(self, data: Any) -> int | float:
            return _number(data)

    return NumberLoader


def _configure(conn: Any) -> None:
    # SUM of a BIGINT column is NUMERIC, which psycopg reads as Decimal: read it as int (or
    # float), as sqlite3 reads its sums, so that counts stay ints (a status's JSON too)
    conn.adapters.register_loader("numeric", _loader_class())
    conn.execute(f"SET lock_timeout = '{_LOCK_TIMEOUT_S}s'")


def _connect(url: str, *, readonly: bool = False) -> Any:
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S)
    except psycopg.Error as error:
        raise DatabaseUnreachable(f"cannot connect to {safe_url(url)!r}: "
                                  f"{str(error).strip()}") from None
    _configure(conn)
    if readonly:
        conn.execute("SET default_transaction_read_only = on")
    return conn


_POOLS: dict[str, Any] = {}
_POOLS_LOCK = threading.Lock()
#: Seconds a call waits for a free pooled connection before it connects on its own.
_POOL_WAIT_S = 2.0
#: Connections made past a pool that had none to give (closed after their one use).
_OWN: set[int] = set()


def use_pool(url: str, size: int) -> Any:
    """From now on in this process, every experiment of the database at ``url`` borrows its
    connections from one pool of at most ``size`` (a psycopg_pool ``ConnectionPool``, made on
    the first call; later calls return it). Who needs it: a server of many experiments, whose
    sessions would otherwise grow with its experiments (one each)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ExperimentError(f"size must be an integer >= 1, got {size!r}")
    _psycopg()
    try:
        from psycopg_pool import ConnectionPool
    except ImportError:  # pragma: no cover - in the postgres extra
        raise ExperimentError("a connection pool needs psycopg_pool: pip install "
                              "'banditkit[postgres]'") from None
    with _POOLS_LOCK:
        pool = _POOLS.get(url)
        if pool is None:
            pool = ConnectionPool(url, min_size=1, max_size=size, open=True,
                                  kwargs={"autocommit": True,
                                          "connect_timeout": _CONNECT_TIMEOUT_S},
                                  configure=_configure, timeout=_POOL_WAIT_S,
                                  name="banditkit")
            _POOLS[url] = pool
        return pool


def pool_of(url: str) -> Any:
    """The pool :func:`use_pool` made for ``url`` in this process, or ``None``."""
    return _POOLS.get(url)


def _borrow(pool: Any, url: str) -> Any:
    """A connection of ``pool``; if none is free within ``_POOL_WAIT_S`` (every one busy, or
    the pool still reconnecting, with its growing back-off, after the database came back), one
    of the call's own, closed after it: a call never waits out the pool's back-off, and a
    database that is down is answered at once (:class:`DatabaseUnreachable`)."""
    from psycopg_pool import PoolTimeout

    try:
        return pool.getconn()
    except PoolTimeout:
        conn = _connect(url)
        _OWN.add(id(conn))
        return conn


@lru_cache(maxsize=512)
def _placeholders(sql: str) -> str:
    """SQLite's ``?`` placeholders as psycopg's ``%s`` (the experiment's SQL holds no other
    ``?`` and no ``%``)."""
    return sql.replace("?", "%s")


#: The table a writing statement changes (``INSERT INTO t``, ``UPDATE t``, ``DELETE FROM t``,
#: after a ``WITH`` clause), and the tables a reading statement names (``FROM t``, ``JOIN t``).
_WRITES = re.compile(r"(?:WITH\b.*?\)\s*)?(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)",
                     re.S | re.I)
_READS = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)", re.I)


class _Connection:
    """The psycopg connection as the experiment's SQL uses it: ``execute`` and
    ``executemany`` with ``?`` placeholders, as on ``sqlite3.Connection``.

    In a writing transaction the connection is in psycopg's **pipeline mode**: a statement is
    sent without waiting for its answer, and the client waits only when it reads a result (a
    ``fetch``) or at ``COMMIT``. So the writes of a call travel with its next read or with its
    ``COMMIT``, and a round trip is paid per *read*, not per statement (issue 26: 16
    sequential round trips per assign + record). The server still runs the statements one
    after another in the order sent, inside the one transaction, so what a call reads and
    writes is what it was without the pipeline; a statement that fails fails the call (its
    error is raised at the next read or at ``COMMIT``, and the transaction is rolled back).

    **Read-ahead** (:meth:`read_ahead`): reads a call is known to make are sent with the
    transaction's first round trip (``BEGIN`` and the lock); the call's own ``execute`` of the
    same SQL with the same parameters then takes that answer instead of asking again. An
    answer is dropped, unused, as soon as the call writes to a table the read names (what the
    read saw may have changed), so a call never sees an answer older than its own writes.
    """

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        #: (sql, parameters) -> (cursor holding its answer, the tables it reads)
        self._ahead: dict[tuple[str, tuple[Any, ...]], tuple[Any, set[str]]] = {}

    def read_ahead(self, queries: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Send ``queries`` now (in pipeline mode: without waiting) and keep their answers
        for the ``execute`` calls that ask for them (see the class docstring)."""
        for sql, parameters in queries:
            key = (sql, tuple(parameters))
            if key not in self._ahead:
                cursor = self._conn.execute(_placeholders(sql), list(parameters) or None)
                self._ahead[key] = (cursor, {t.lower() for t in _READS.findall(sql)})

    def forget(self) -> None:
        """Drop every answer read ahead (the transaction ended)."""
        self._ahead.clear()

    def _wrote(self, sql: str) -> None:
        # a write to table t makes every answer read ahead from t stale; a statement whose
        # table cannot be told makes them all stale
        if not self._ahead:
            return
        match = _WRITES.match(sql.lstrip())
        if match is None:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                self._ahead.clear()
            return
        table = match.group(1).lower()
        for key in [k for k, (_, tables) in self._ahead.items() if table in tables]:
            del self._ahead[key]

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        ahead = self._ahead.pop((sql, tuple(parameters)), None)
        if ahead is not None:
            return ahead[0]
        self._wrote(sql)
        return self._conn.execute(_placeholders(sql), list(parameters) or None)

    def executemany(self, sql: str, rows: Any) -> Any:
        rows = list(rows)
        self._wrote(sql)
        cursor = self._conn.cursor()
        bulk = bulk_statements(sql, rows)
        if bulk is not None:
            # one statement of an array per column (pg_bulk): a fixed text, parsed once and
            # prepared, instead of a statement per row or a VALUES list per row count
            for statement, arrays in bulk:
                cursor.execute(statement, arrays)
            return cursor
        if rows:
            cursor.executemany(_placeholders(sql), rows)
        return cursor


# A reading call: one snapshot, no lock. A writing call: READ COMMITTED (each statement sees
# what was committed before it), and the experiment's write lock, the row lock of its 'created'
# meta row, taken first and held to COMMIT or ROLLBACK.
_BEGIN_READ = ("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
               "SELECT value FROM meta WHERE key = 'created'")
_BEGIN_WRITE = ("BEGIN ISOLATION LEVEL READ COMMITTED; "
                "SELECT value FROM meta WHERE key = 'created' FOR UPDATE")


class PostgresStore(Store):
    """An open experiment in a PostgreSQL database (see the module docstring)."""

    last_id_sql = "SELECT currval(pg_get_serial_sequence('units', 'id'))"
    types = POSTGRES_TYPES

    def __init__(self, conn: Any, url: str, name: str, readonly: bool, created: str,
                 pool: Any = None) -> None:
        #: the connection: its own, or (pooled) the one borrowed for the transaction running
        self.conn = conn
        self._pool = pool
        self._schema = _quoted(schema_name(name))
        self._dsn = url  # with its password: to reconnect, never printed
        self.url = safe_url(url)
        self.name = name
        self.readonly = readonly
        self.label = f"experiment {name!r} in {self.url!r}"
        self.errors = (_psycopg().Error,)
        self._created = created  # meta 'created' at open: a replaced experiment differs
        self._wrapped = _Connection(conn)

    # -- creating and opening --------------------------------------------------------------
    @classmethod
    def create(cls, url: str, name: str, meta: dict[str, Any]) -> PostgresStore:
        """Create experiment ``name`` (schema ``bk_<name>``) holding ``meta``, in one
        transaction: two processes creating one name leave one experiment, and the other gets
        :class:`ExperimentExists`."""
        psycopg = _psycopg()
        pool = pool_of(url)
        target = _quoted(schema_name(name))
        # a pooled connection the database dropped while it idled (a restart) is found broken
        # on first use: nothing was created on it, so it is tried on another, up to the pool's
        # size (as _pooled does for reads)
        tries = 0 if pool is None else pool.max_size
        for attempt in range(tries + 1):
            conn = _connect(url) if pool is None else _borrow(pool, url)
            try:
                return cls._create_on(conn, url, name, meta, target, pool)
            except psycopg.OperationalError as error:
                if not _dropped(conn, error) or attempt == tries:
                    _give_back(pool, conn)
                    raise DatabaseUnreachable(
                        f"could not create experiment {name!r} in {safe_url(url)!r}: "
                        f"{str(error).strip()}") from None
                _give_back(pool, conn)
        raise AssertionError("unreachable")  # pragma: no cover

    @classmethod
    def _create_on(cls, conn: Any, url: str, name: str, meta: dict[str, Any], target: str,
                   pool: Any) -> PostgresStore:
        """:meth:`create` on the connection ``conn``; a dropped connection is psycopg's
        ``OperationalError``, for :meth:`create` to try another."""
        psycopg = _psycopg()
        try:
            with conn.transaction():
                conn.execute(f"CREATE SCHEMA {target}")
                conn.execute(f"SET LOCAL search_path TO {target}")
                conn.execute(schema(POSTGRES_TYPES))
                # status and assign read the units through small partial indexes, which the
                # planner picks only with fresh statistics: analyze after every 1,000 changed
                # units, and vacuum the dead row versions every record leaves in them
                conn.execute("ALTER TABLE units SET (autovacuum_analyze_threshold = 1000, "
                             "autovacuum_analyze_scale_factor = 0, "
                             "autovacuum_vacuum_threshold = 10000, "
                             "autovacuum_vacuum_scale_factor = 0.01)")
                with conn.cursor() as cursor:
                    cursor.executemany("INSERT INTO meta VALUES (%s, %s)",
                                       [(k, json.dumps(v)) for k, v in
                                        {**meta, "format": FORMAT}.items()])
        except psycopg.errors.DuplicateSchema:
            _give_back(pool, conn)
            raise ExperimentExists(f"an experiment named {name!r} already exists in "
                                   f"{safe_url(url)!r}: open it with Experiment.open, or "
                                   "choose a new name") from None
        except psycopg.errors.UniqueViolation:  # created at the same moment by another process
            _give_back(pool, conn)
            raise ExperimentExists(f"an experiment named {name!r} already exists in "
                                   f"{safe_url(url)!r} (created at the same moment by another "
                                   "process)") from None
        except psycopg.Error as error:
            if isinstance(error, psycopg.OperationalError) and _dropped(conn, error):
                raise  # create tries another connection
            _give_back(pool, conn)
            raise ExperimentError(f"could not create experiment {name!r} in "
                                  f"{safe_url(url)!r}: {str(error).strip()}") from None
        return cls._attach(conn, url, name, readonly=False, pool=pool)

    @classmethod
    def open(cls, url: str, name: str, readonly: bool = False) -> PostgresStore:
        """Open experiment ``name`` of the database at ``url``; refused (before anything is
        written) when it does not exist, is not an experiment, or has another format."""
        pool = pool_of(url)
        target = _quoted(schema_name(name))

        def look(conn: Any) -> tuple[set[str], Any]:
            tables = {r[0] for r in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind = 'r'", (schema_name(name),))}
            row = (conn.execute(f"SELECT value FROM {target}.meta WHERE key = 'created'"
                                ).fetchone() if "meta" in tables else None)
            return tables, row

        conn = _connect(url, readonly=readonly) if pool is None else None
        try:
            tables, row = look(conn) if pool is None else _pooled(pool, url, look)
        except _psycopg().Error as error:
            _give_back(pool, conn)
            raise ExperimentError(f"cannot read {safe_url(url)!r}: {str(error).strip()}"
                                  ) from None
        if not tables:
            _give_back(pool, conn)
            raise ExperimentNotFound(f"no experiment named {name!r} in {safe_url(url)!r} "
                                     "(create one with Experiment.create)")
        if not {"meta", "batches", "units"} <= tables:
            _give_back(pool, conn)
            raise ExperimentError(f"schema {schema_name(name)!r} of {safe_url(url)!r} is not a "
                                  "banditkit experiment (it lacks the meta, batches and units "
                                  "tables)")
        if pool is not None:
            store = cls(None, url, name, readonly, None if row is None else row[0], pool)
        else:
            store = cls._attach(conn, url, name, readonly=readonly)
        try:
            store.format = check_format(store.meta().get("format"), readonly, store.label)
        except ExperimentError:
            store.close()
            raise
        return store

    @classmethod
    def _attach(cls, conn: Any, url: str, name: str, readonly: bool, pool: Any = None
                ) -> PostgresStore:
        target = _quoted(schema_name(name))
        try:
            row = conn.execute(f"SELECT value FROM {target}.meta WHERE key = 'created'"
                               ).fetchone()
            if pool is None:
                conn.execute(f"SET search_path TO {target}")
        except _psycopg().Error as error:
            _give_back(pool, conn)
            raise ExperimentError(f"cannot read {safe_url(url)!r}: {str(error).strip()}"
                                  ) from None
        if pool is not None:
            _give_back(pool, conn)  # borrowed again by each transaction
            conn = None
        return cls(conn, url, name, readonly, None if row is None else row[0], pool)

    def close(self) -> None:
        if self._pool is None:
            self.conn.close()
        elif self.conn is not None:  # closed inside a transaction: give its connection back
            _give_back(self._pool, self.conn)
            self.conn = None

    # -- transactions ------------------------------------------------------------------------
    @contextmanager
    def _one_transaction(self, read_ahead: Sequence[tuple[str, Sequence[Any]]] = ()
                         ) -> Iterator[_Connection]:
        if self._pool is None:
            with self._transaction_on_connection(read_ahead) as conn:
                yield conn
            return
        self._lend(_borrow(self._pool, self._dsn))
        try:
            with self._transaction_on_connection(read_ahead) as conn:
                yield conn
        finally:
            _give_back(self._pool, self.conn)  # a broken one is dropped by the pool
            self.conn = None

    def _lend(self, conn: Any) -> None:
        self.conn = conn
        self._wrapped = _Connection(conn)

    @contextmanager
    def _transaction_on_connection(self, read_ahead: Sequence[tuple[str, Sequence[Any]]] = ()
                                   ) -> Iterator[_Connection]:
        psycopg = _psycopg()
        try:
            # a pool may hold several connections the database dropped: each is tried once
            tries = 1 if self._pool is None else self._pool.max_size
            for attempt in range(tries + 1):
                try:
                    row = self._begin(read_ahead)
                    break
                except psycopg.OperationalError as error:
                    if not _dropped(self.conn, error) or attempt == tries:
                        raise
                    # the connection died between calls (a server restart, an idle timeout):
                    # nothing of this call has run, so open a new one and begin again
                    self._leave_pipeline()
                    self._reconnect()
        except psycopg.errors.LockNotAvailable as error:
            self._rollback()
            raise ExperimentError(f"{self.label} is locked by another process for more than "
                                  f"{_LOCK_TIMEOUT_S} s ({str(error).strip()})") from None
        except psycopg.errors.UndefinedTable:
            self._rollback()
            raise ExperimentError(f"{self.label} was deleted since it was opened; nothing "
                                  "more is written to it (open it again)") from None
        except BaseException:
            self._rollback()
            raise
        if row is None or row[0] != self._created:
            self._rollback()
            raise ExperimentError(f"{self.label} was deleted or replaced since it was opened; "
                                  "nothing more is written to it (open it again)")
        try:
            yield self._wrapped
            self._wrapped.execute("COMMIT")
            # in pipeline mode: the writes not yet answered and COMMIT, one round trip; an
            # error of any of them raises here, and the transaction is rolled back
            self._leave_pipeline(check=True)
        except BaseException:
            self._rollback()
            raise
        finally:
            self._wrapped.forget()

    def _begin(self, read_ahead: Sequence[tuple[str, Sequence[Any]]] = ()) -> Any:
        """Open the transaction: ``BEGIN``, (pooled) the schema, the lock or snapshot's first
        read, and a writing call's reads ahead, all in one round trip; returns the row of
        ``'created'``."""
        begin, lock = (_BEGIN_READ if self.readonly else _BEGIN_WRITE).split("; ")
        if self.readonly:
            # the simple query protocol takes several statements at once: one round trip
            if self._pool is not None:
                begin += f"; SET LOCAL search_path TO {self._schema}"
            cursor = self.conn.execute(f"{begin}; {lock}")
            while cursor.nextset():
                pass
            return cursor.fetchone()
        # writing: pipeline mode (see _Connection), where each statement is sent on its own
        # but nothing waits until the lock's row is read
        self._pipeline_block = self.conn.pipeline()
        self._pipeline = self._pipeline_block.__enter__()
        self.conn.execute(begin)
        if self._pool is not None:
            self.conn.execute(f"SET LOCAL search_path TO {self._schema}")
        cursor = self.conn.execute(lock)
        self._wrapped.read_ahead(read_ahead)
        return cursor.fetchone()

    #: in a writing transaction: psycopg's pipeline (and the block that entered it)
    _pipeline: Any = None
    _pipeline_block: Any = None

    def _leave_pipeline(self, check: bool = False) -> None:
        """End pipeline mode (its last answers read); with ``check``, raise the error of a
        statement that failed, else ignore it (the transaction is being rolled back)."""
        block, self._pipeline, self._pipeline_block = self._pipeline_block, None, None
        if block is None:
            return
        if check:
            block.__exit__(None, None, None)
            return
        try:
            block.__exit__(None, None, None)
        except _psycopg().Error:
            pass

    def _read_ahead(self, conn: Any, read_ahead: Sequence[tuple[str, Sequence[Any]]]) -> None:
        if self._pipeline is not None:
            conn.read_ahead(read_ahead)

    def _confirm(self) -> None:
        # one round trip: every statement sent so far has run (or its error is raised here)
        if self._pipeline is not None:
            self._pipeline.sync()

    def _recover(self) -> None:
        # after a failed statement the server skips the rest of the pipeline up to a sync
        if self._pipeline is not None:
            try:
                self._pipeline.sync()
            except _psycopg().Error:
                pass

    def _reconnect(self) -> None:
        if self._pool is not None:
            _give_back(self._pool, self.conn)
            self._lend(_borrow(self._pool, self._dsn))
            return
        self.conn.close()
        self.conn = _connect(self._dsn, readonly=self.readonly)
        self.conn.execute(f"SET search_path TO {_quoted(schema_name(self.name))}")
        self._wrapped = _Connection(self.conn)

    def _rollback(self) -> None:
        self._leave_pipeline()
        self._wrapped.forget()
        if self.conn.closed:
            return
        try:
            self.conn.execute("ROLLBACK")
        except _psycopg().Error:  # the connection is gone: the server rolled it back
            pass

    def meta(self) -> dict[str, Any]:
        def rows_of(conn: Any) -> list[Any]:
            return conn.execute(f"SELECT key, value FROM {self._schema}.meta").fetchall()

        try:
            # pooled, between transactions: on a connection borrowed for this read
            rows = (rows_of(self.conn) if self.conn is not None
                    else _pooled(self._pool, self._dsn, rows_of))
            return {k: json.loads(v) for k, v in rows}
        except (_psycopg().Error, ValueError, TypeError) as error:
            raise ExperimentError(f"{self.label} is damaged: its meta table cannot be read "
                                  f"({str(error).strip()})") from None

    # -- dialect -----------------------------------------------------------------------------
    def total(self, expression: str) -> str:
        return f"CAST(COALESCE(SUM({expression}), 0) AS DOUBLE PRECISION)"

    def count_if(self, condition: str) -> str:
        # PostgreSQL has no SUM(boolean): count the rows where it holds
        return self.total(f"CASE WHEN {condition} THEN 1 ELSE 0 END")

    def json_item(self, column: str, index: int) -> str:
        return f"CAST(CAST({column} AS JSONB) ->> {int(index)} AS DOUBLE PRECISION)"

    def indexed_by(self, index: str) -> str:
        return ""


def _pooled(pool: Any, url: str, read: Any) -> Any:
    """``read(conn)`` on a borrowed connection, given back after. A connection the database
    dropped while it idled in the pool (a restart) is only found broken on use: it is dropped
    and the read tried on another, up to the pool's size, so one restart does not fail the
    next few calls."""
    psycopg = _psycopg()
    for attempt in range(pool.max_size + 1):
        conn = _borrow(pool, url)
        try:
            return read(conn)
        except psycopg.OperationalError as error:
            if not _dropped(conn, error) or attempt == pool.max_size:
                raise
        finally:
            _give_back(pool, conn)
    raise AssertionError("unreachable")  # pragma: no cover


def _dropped(conn: Any, error: Exception) -> bool:
    """Whether ``error`` (raised by a call's first round trip) says the server dropped the
    connection: broken already, or a shutdown/connection error whose end-of-stream psycopg
    has not read yet (a terminated backend sends its FATAL message first: in pipeline mode the
    error can arrive before the connection is marked broken)."""
    state = getattr(getattr(error, "diag", None), "sqlstate", None) or ""
    return bool(conn.broken or state.startswith(("57P", "08")))


def _give_back(pool: Any, conn: Any) -> None:
    """Return a borrowed connection to its pool (rolled back, or dropped if broken), or close
    a connection of its own."""
    if conn is None:
        return
    if pool is None or id(conn) in _OWN:
        _OWN.discard(id(conn))
        conn.close()
    else:
        pool.putconn(conn)


def list_names(url: str, only: str | None = None) -> list[str]:
    """The experiments of the database at ``url`` (schemas ``bk_<name>`` holding a ``meta``
    table), sorted; ``only``: just that name, if it exists."""
    pool = pool_of(url)
    sql = ("SELECT n.nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid "
           "AND c.relname = 'meta' AND c.relkind = 'r' WHERE ")

    def names_of(conn: Any) -> list[Any]:
        if only is None:
            return conn.execute(sql + "n.nspname LIKE %s",
                                (_PREFIX.replace("_", "\\_") + "%",)).fetchall()
        return conn.execute(sql + "n.nspname = %s", (schema_name(only),)).fetchall()

    conn = _connect(url, readonly=True) if pool is None else None
    try:
        rows = names_of(conn) if pool is None else _pooled(pool, url, names_of)
    except _psycopg().Error as error:
        raise ExperimentError(f"cannot read {safe_url(url)!r}: {str(error).strip()}") from None
    finally:
        _give_back(None, conn)
    names = (r[0][len(_PREFIX):] for r in rows)
    return sorted(n for n in names if NAME_PATTERN.fullmatch(n))


def run_statements(url: str, statements: list) -> list[Any]:
    """Run ``statements`` (SQL strings, or ``(sql, params)`` with ``%s`` placeholders) in
    order, each in autocommit, on a connection of ``url``'s pool (or one of the call's own),
    and return the last one's rows. Who needs it: the service's ended browser sessions
    (:mod:`banditkit.service.revocations`), a table outside every experiment's schema."""
    pool = pool_of(url)

    def run(conn: Any) -> list[Any]:
        cursor = None
        for statement in statements:
            sql, params = (statement, ()) if isinstance(statement, str) else statement
            cursor = conn.execute(sql, params)
        return [] if cursor is None or cursor.description is None else cursor.fetchall()

    if pool is not None:
        return _pooled(pool, url, run)
    conn = _connect(url)
    try:
        return run(conn)
    finally:
        conn.close()


def drop(url: str, name: str) -> None:
    """Drop experiment ``name``'s schema (every table of it) in one transaction, after taking
    its write lock (a writer in progress finishes first; one that comes later finds it gone)."""
    conn = _connect(url)
    try:
        with conn.transaction():
            target = _quoted(schema_name(name))
            conn.execute(f"SELECT value FROM {target}.meta WHERE key = 'created' FOR UPDATE")
            conn.execute(f"DROP SCHEMA {target} CASCADE")
    except _psycopg().Error as error:
        raise ExperimentError(f"could not delete experiment {name!r} in {safe_url(url)!r}: "
                              f"{str(error).strip()}") from None
    finally:
        conn.close()
