-- SPDX-License-Identifier: MIT
-- sandboxd's state. db.c applies the steps whose number is above PRAGMA user_version, each in one
-- transaction, so a database is migrated once, by whichever worker opens it first.

-- step 1
CREATE TABLE requests (
    request_id  TEXT PRIMARY KEY,          -- nginx's $request_id, the X-Request-Id header
    route       TEXT NOT NULL,             -- e.g. "POST /v1/execute"
    sandbox_id  TEXT,                      -- NULL when no sandbox was started
    status      INTEGER,                   -- HTTP status; NULL while the request is in flight
    exit_code   INTEGER,
    duration_ms INTEGER,
    error       TEXT,                      -- the error message sent, if any
    worker_pid  INTEGER NOT NULL,
    started_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at TEXT
);
CREATE INDEX requests_in_flight ON requests(worker_pid) WHERE status IS NULL;

-- step 2
-- The warm pool: one row per sandbox that the pool manager started and no execution has finished with.
CREATE TABLE pool (
    sandbox_id  TEXT PRIMARY KEY,
    state       TEXT NOT NULL CHECK (state IN ('starting', 'ready', 'claimed')),
    socket      TEXT NOT NULL,             -- where its runner accepts the execution
    owner_pid   INTEGER,                   -- the worker that claimed it
    created_at  REAL NOT NULL,             -- unix time
    ready_at    REAL,
    claimed_at  REAL
);
CREATE INDEX pool_ready ON pool(state, ready_at);
-- Lifetime counters: created_total (sandboxes ever started), waits (claims that found none ready).
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO counters (name, value) VALUES ('created_total', 0), ('waits', 0);

-- step 3
-- Whether the pool manager can start sandboxes at all: consecutive failures and the last reason,
-- so that a waiting request can answer with the real reason instead of waiting in vain.
CREATE TABLE pool_health (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    failures    INTEGER NOT NULL,
    last_error  TEXT,
    at          REAL NOT NULL
);
INSERT INTO pool_health (id, failures, last_error, at) VALUES (1, 0, NULL, 0);

-- step 4
-- A machine serves several executions, one at a time, each in a sandbox of its own: the pool counts
-- machines, each with the executions it has served; created_total counts sandboxes, one per
-- execution; every request names the machine that ran it.
ALTER TABLE pool RENAME COLUMN sandbox_id TO machine_id;
ALTER TABLE pool ADD COLUMN executions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN machine_id TEXT;
-- The settings a machine was started with: one left by a previous instance is kept only if they
-- are still the settings in force.
ALTER TABLE pool ADD COLUMN settings TEXT NOT NULL DEFAULT '';

-- step 5
-- The language a machine's next sandbox is made ready for (its runner says so with each reply): a
-- claim takes a machine ready for its language first.
ALTER TABLE pool ADD COLUMN prepared TEXT NOT NULL DEFAULT 'python';

-- step 6
-- Sessions: a machine each, for the session's whole life; paused (no machine, files kept on its disk)
-- when idle, deleted after a while paused. 'pausing' while the pool manager stops an idle one's
-- machine; a deleted session keeps its row for the record.
CREATE TABLE sessions (
    session_id  TEXT PRIMARY KEY,
    state       TEXT NOT NULL CHECK (state IN ('active', 'pausing', 'paused', 'deleted')),
    ttl_s       INTEGER NOT NULL,          -- idle seconds before it is paused
    created_at  REAL NOT NULL,             -- unix time
    last_used   REAL NOT NULL,
    paused_at   REAL,
    deleted_at  REAL,
    run_count   INTEGER NOT NULL DEFAULT 0,
    up          INTEGER NOT NULL DEFAULT 0, -- its machine was started and has not been seen to end
    state_reset INTEGER NOT NULL DEFAULT 0  -- its interpreters' state was lost since its last run
);
CREATE INDEX sessions_state ON sessions(state, last_used);
-- Every event of a session's life, with the request that caused it (none for the pool manager's).
CREATE TABLE session_events (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    event       TEXT NOT NULL,             -- create, run, exec, upload, pause, resume, expire, delete, reset, ...
    request_id  TEXT,
    at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    detail      TEXT
);
CREATE INDEX session_events_session ON session_events(session_id);
-- The operations waiting for or holding a session, in arrival order: one at a time per session.
-- A row goes with its worker: the master removes a dead worker's.
CREATE TABLE session_queue (
    ticket      INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,
    worker_pid  INTEGER NOT NULL,
    arrived     REAL NOT NULL
);
CREATE INDEX session_queue_session ON session_queue(session_id, ticket);
ALTER TABLE requests ADD COLUMN session_id TEXT;
