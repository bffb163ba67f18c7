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
