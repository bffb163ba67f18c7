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

-- step 7
-- GET /metrics. A request's row says which route it matched (the route table's path; NULL: none),
-- and an execution's its language and how it ended. Totals are kept as rows finish, by the
-- triggers below and by the code that counts events, so that a scrape reads a few small tables
-- whatever the number of requests recorded. They count from this step on.
ALTER TABLE requests ADD COLUMN endpoint TEXT;
ALTER TABLE requests ADD COLUMN language TEXT;     -- python, node, bash; NULL: not an execution
ALTER TABLE requests ADD COLUMN termination TEXT;  -- ok, exit_nonzero, timeout, memory_limit, tasks_limit, failed
CREATE TABLE request_totals (
    endpoint TEXT NOT NULL,                -- 'unmatched' for the requests that matched no route
    status   INTEGER NOT NULL,
    count    INTEGER NOT NULL,
    PRIMARY KEY (endpoint, status)
) WITHOUT ROWID;
CREATE TABLE execution_totals (
    language    TEXT NOT NULL,
    termination TEXT NOT NULL,
    count       INTEGER NOT NULL,
    PRIMARY KEY (language, termination)
) WITHOUT ROWID;
-- The execution duration histogram: its buckets' upper bounds, how many executions of each
-- language took at most each bound (cumulative, as Prometheus has it), and their count and sum.
CREATE TABLE duration_bounds (le_ms INTEGER PRIMARY KEY);
INSERT INTO duration_bounds (le_ms) VALUES (5), (10), (25), (50), (100), (250), (500), (1000), (2500), (5000), (10000), (20000),
    (30000), (60000);
CREATE TABLE duration_buckets (
    language TEXT NOT NULL,
    le_ms    INTEGER NOT NULL,
    count    INTEGER NOT NULL,
    PRIMARY KEY (language, le_ms)
) WITHOUT ROWID;
CREATE TABLE duration_totals (
    language TEXT PRIMARY KEY,
    count    INTEGER NOT NULL,
    sum_ms   INTEGER NOT NULL
) WITHOUT ROWID;
-- A request is counted once, when its status is first set: by the worker that answered it, or by
-- the master that closed it after its worker died. An execution without a termination recorded
-- (its worker died) ended as 'failed'; one without a duration (no answer) is not in the histogram.
CREATE TRIGGER requests_finished AFTER UPDATE OF status ON requests
WHEN OLD.status IS NULL AND NEW.status IS NOT NULL
BEGIN
    INSERT INTO request_totals (endpoint, status, count) VALUES (coalesce(NEW.endpoint, 'unmatched'), NEW.status, 1)
        ON CONFLICT DO UPDATE SET count = count + 1;
    INSERT INTO execution_totals (language, termination, count)
        SELECT NEW.language, coalesce(NEW.termination, 'failed'), 1 WHERE NEW.language IS NOT NULL
        ON CONFLICT DO UPDATE SET count = count + 1;
    INSERT INTO duration_buckets (language, le_ms, count)
        SELECT NEW.language, le_ms, 1 FROM duration_bounds
        WHERE NEW.language IS NOT NULL AND NEW.duration_ms IS NOT NULL AND NEW.duration_ms <= le_ms
        ON CONFLICT DO UPDATE SET count = count + 1;
    INSERT INTO duration_totals (language, count, sum_ms)
        SELECT NEW.language, 1, NEW.duration_ms WHERE NEW.language IS NOT NULL AND NEW.duration_ms IS NOT NULL
        ON CONFLICT DO UPDATE SET count = count + 1, sum_ms = sum_ms + excluded.sum_ms;
END;
-- Events counted where they happen: machines created ('machine_created', ''), retired
-- ('machine_retired', the reason), sqlite errors ('sqlite_error', ''), failed broker calls
-- ('broker_error', the operation).
CREATE TABLE event_totals (
    event TEXT NOT NULL,
    label TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (event, label)
) WITHOUT ROWID;

-- step 8
-- What each execution, session run and tool call used, from its cgroup: CPU time and peak memory
-- (NULL: not counted, e.g. a request that ran nothing). The limit it hit is its termination.
ALTER TABLE requests ADD COLUMN cpu_ms INTEGER;
ALTER TABLE requests ADD COLUMN memory_peak_bytes INTEGER;

-- step 9
-- API keys (SANDBOXD_API_KEYS=on; sandboxctl key). A key's token is shown once, when it is made;
-- only its SHA-256 is kept. A revoked key keeps its row (and its name: records name it).
CREATE TABLE api_keys (
    name                  TEXT PRIMARY KEY,
    token_sha256          TEXT NOT NULL UNIQUE,  -- lower-case hex
    max_concurrent        INTEGER,               -- its requests in flight at most; NULL: no limit
    executions_per_minute INTEGER,               -- executions started in the last 60 s at most
    cpu_seconds_per_day   INTEGER,               -- CPU time of its runs in the last 24 h at most
    created_at            TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    revoked_at            TEXT
);
-- Every request names the key it came with (NULL: none), and whether it was let in as an execution
-- (what executions-per-minute counts; a request refused by a quota never is). A session belongs to
-- the key that made it.
ALTER TABLE requests ADD COLUMN key_name TEXT;
ALTER TABLE requests ADD COLUMN execution INTEGER NOT NULL DEFAULT 0;
-- What a key's quotas read, inside the transaction that admits a request (under the write lock),
-- each from an index alone: its executions and its CPU time by start (its requests in flight come
-- from requests_in_flight, a few rows whatever the table's size).
CREATE INDEX requests_key ON requests(key_name, started_at, execution) WHERE key_name IS NOT NULL;
CREATE INDEX requests_key_cpu ON requests(key_name, started_at, cpu_ms) WHERE key_name IS NOT NULL AND cpu_ms > 0;
ALTER TABLE sessions ADD COLUMN key_name TEXT;
-- The totals of each key's requests and executions, for the metrics' key label: kept beside those
-- of step 7, which go on counting every request, by a trigger of their own. A scrape tells a key's
-- from the rest by subtracting.
CREATE TABLE key_request_totals (
    key      TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    status   INTEGER NOT NULL,
    count    INTEGER NOT NULL,
    PRIMARY KEY (key, endpoint, status)
) WITHOUT ROWID;
CREATE TABLE key_execution_totals (
    key         TEXT NOT NULL,
    language    TEXT NOT NULL,
    termination TEXT NOT NULL,
    count       INTEGER NOT NULL,
    PRIMARY KEY (key, language, termination)
) WITHOUT ROWID;
CREATE TRIGGER requests_finished_key AFTER UPDATE OF status ON requests
WHEN OLD.status IS NULL AND NEW.status IS NOT NULL AND NEW.key_name IS NOT NULL
BEGIN
    INSERT INTO key_request_totals (key, endpoint, status, count) VALUES (NEW.key_name, coalesce(NEW.endpoint, 'unmatched'), NEW.status, 1)
        ON CONFLICT DO UPDATE SET count = count + 1;
    INSERT INTO key_execution_totals (key, language, termination, count)
        SELECT NEW.key_name, NEW.language, coalesce(NEW.termination, 'failed'), 1 WHERE NEW.language IS NOT NULL
        ON CONFLICT DO UPDATE SET count = count + 1;
END;

-- step 10
-- The tool images a key may call with POST /v1/call (sandboxctl key add --images), their names
-- comma-separated; NULL: every tool image. Any other image answers as one that does not exist.
ALTER TABLE api_keys ADD COLUMN images TEXT;
-- step 11
-- Every kind of work under a quota (docs/security.md, "Quotas"). A key's caps on its sessions:
-- active ones, the ones it keeps (active or paused: each may be paused and then holds a disk until
-- SANDBOXD_SESSION_RETAIN_S), and their disks' bytes (each as large as SANDBOXD_SESSION_DISK_BYTES
-- lets it grow). NULL: no limit of the key's own.
ALTER TABLE api_keys ADD COLUMN max_sessions INTEGER;
ALTER TABLE api_keys ADD COLUMN max_paused_sessions INTEGER;
ALTER TABLE api_keys ADD COLUMN session_disk_bytes INTEGER;
-- Whether a request was let in as work that executions-per-minute counts: an execution, a session
-- create, a file upload, a pause. Rows from before this step counted executions only; the last
-- minute's are carried over, as only they are in a window.
ALTER TABLE requests ADD COLUMN rated INTEGER NOT NULL DEFAULT 0;
UPDATE requests SET rated = 1
    WHERE execution = 1 AND key_name IS NOT NULL AND started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-60 seconds');
CREATE INDEX requests_key_rated ON requests(key_name, started_at) WHERE key_name IS NOT NULL AND rated = 1;
-- CPU a session's sandbox used outside its runs (its background processes), from its cgroup: what
-- the session's next run did not report because the session was paused or deleted first. Billed
-- to the key (cpu-seconds-per-day reads it beside the requests' cpu_ms).
CREATE TABLE session_usage (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    key_name    TEXT,
    event       TEXT NOT NULL,             -- pause, expire, delete
    request_id  TEXT,                      -- NULL: the pool manager's
    cpu_ms      INTEGER NOT NULL,
    at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX session_usage_key ON session_usage(key_name, at, cpu_ms) WHERE key_name IS NOT NULL;
-- SANDBOXD_RECORD_RETAIN_DAYS: the pool manager deletes finished requests (and session_usage rows)
-- older than that, by start. Deleting fires no trigger: the totals of step 7 and 9 keep counting
-- them.
CREATE INDEX requests_started ON requests(started_at);

-- step 12
-- MCP (/mcp): a client's session (Mcp-Session-Id), made by its initialize and ended by its DELETE,
-- with the API key it belongs to and the revision of MCP agreed on; and the tool calls it has in
-- flight, so that a notifications/cancelled (which may reach another worker) finds what to stop.
CREATE TABLE mcp_sessions (
    mcp_session_id TEXT PRIMARY KEY,
    key_name       TEXT,                   -- NULL: made while API keys were off
    version        TEXT NOT NULL,
    created_at     REAL NOT NULL,          -- unix time
    last_used      REAL NOT NULL,
    ended_at       REAL                    -- its DELETE; the row stays for the record
);
CREATE TABLE mcp_calls (
    mcp_session_id TEXT NOT NULL,
    rpc_id         TEXT NOT NULL,          -- the JSON-RPC id, as JSON ("7", "\"a\"")
    request_id     TEXT NOT NULL,          -- the /mcp request serving it: its row names the machine
    tool           TEXT NOT NULL,
    session_id     TEXT,                   -- the sandbox session it acts on, if any
    cancelled      INTEGER NOT NULL DEFAULT 0,
    started_at     REAL NOT NULL,
    PRIMARY KEY (mcp_session_id, rpc_id)
);

-- step 13
-- A /mcp request's JSON-RPC method and, for tools/call, its tool: what the request was, beside
-- the sandbox or session its tool acted on.
ALTER TABLE requests ADD COLUMN mcp_method TEXT;
ALTER TABLE requests ADD COLUMN mcp_tool TEXT;

-- step 14
-- What a key's requests may reach through the egress proxy (sandboxctl key add --egress; README,
-- "Network"): entries separated by commas, within the operator's /etc/sandboxd/egress.allow;
-- "none": nothing. NULL: everything the operator allows.
ALTER TABLE api_keys ADD COLUMN egress TEXT;
-- step 15
-- What a session's code may reach through the egress proxy: its create's "network"."allow", a JSON
-- array, checked again at each run against the operator's and its key's lists. NULL: no network.
ALTER TABLE sessions ADD COLUMN network TEXT;
-- step 16
-- What a request's code did through the egress proxy (its "network"): bytes to it and from it,
-- and the names it reached and those refused, comma-separated, from the proxy's log. NULL: it
-- asked for no network.
ALTER TABLE requests ADD COLUMN network_rx_bytes INTEGER;
ALTER TABLE requests ADD COLUMN network_tx_bytes INTEGER;
ALTER TABLE requests ADD COLUMN network_hosts TEXT;
ALTER TABLE requests ADD COLUMN network_refused TEXT;
-- step 17
-- A cluster's member (README, "Several hosts"): the members as etcd's registry has them, mirrored
-- by sandboxd-member, each its record (cluster/member-record.h): what GET /v1/pool sums.
CREATE TABLE cluster_members (
    name   TEXT PRIMARY KEY,
    record TEXT NOT NULL
);
-- step 18
-- The other members' sessions (cluster/session-record.h), mirrored by sandboxd-member: a JSON list
-- per member, which GET /v1/sessions adds to this member's own.
CREATE TABLE cluster_sessions (
    member TEXT PRIMARY KEY,
    record TEXT NOT NULL
);
-- step 19
-- What the other members' requests and sessions use of each API key (lib/usage-record.h), so
-- that a key's quotas hold across the cluster: mirrored by sandboxd-member, added by the quota
-- checks to this member's own. kind: 'in_flight' (end_ms 0), 'exec' (rated work in the second
-- that ends at end_ms, unix ms), 'cpu' (CPU ms in the minute that ends at end_ms),
-- 'sessions_active', 'sessions_paused' (end_ms 0).
CREATE TABLE cluster_usage (
    member   TEXT NOT NULL,
    key_name TEXT NOT NULL,
    kind     TEXT NOT NULL,
    end_ms   INTEGER NOT NULL,
    amount   INTEGER NOT NULL
);
CREATE INDEX cluster_usage_key ON cluster_usage(key_name, kind, end_ms);
CREATE INDEX cluster_usage_member ON cluster_usage(member);
-- step 20
-- rated: how many uses of executions-per-minute a request made, not only whether it made one: an
-- MCP POST of a JSON-RPC batch makes one for each of its requests (fcgi/mcp.c), its tool call one
-- more. The quota sums it; the index covers every row that counts.
DROP INDEX requests_key_rated;
CREATE INDEX requests_key_rated ON requests(key_name, started_at) WHERE key_name IS NOT NULL AND rated > 0;
