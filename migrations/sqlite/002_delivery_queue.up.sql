-- 002: the durable delivery queue and the per-host circuit breakers
-- (SPEC §2). The query indexes (jobs_state_run_at_idx, jobs_host_state_idx,
-- jobs_finished_at_idx) are EnsureIndexes', made on every start, one list
-- for every index of SPEC §4.

CREATE TABLE jobs (
    -- The rowid: insertion order, the lease's tie-break between jobs due
    -- at the same instant (a fan-out enqueues thousands with one RunAt).
    -- Every index ends with it, so (state, run_at) serves ORDER BY run_at,
    -- seq without a sort.
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL,
    dedupe_key  TEXT NOT NULL,
    activity_id TEXT NOT NULL,
    inbox       TEXT NOT NULL,
    host        TEXT NOT NULL,
    sender_id   TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    -- BLOB: the activity is sent exactly as it was signed.
    payload     BLOB NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('queued', 'leased', 'succeeded', 'dead')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    run_at      INTEGER NOT NULL,
    lease_owner TEXT NOT NULL DEFAULT '',
    lease_token TEXT NOT NULL DEFAULT '',
    lease_until INTEGER,
    last_error  TEXT NOT NULL DEFAULT '',
    created_at  INTEGER,
    finished_at INTEGER,
    CHECK (state <> 'leased' OR (lease_token <> '' AND lease_until IS NOT NULL))
) STRICT;
CREATE UNIQUE INDEX jobs_id_key ON jobs (id);
CREATE UNIQUE INDEX jobs_dedupe_key_key ON jobs (dedupe_key);

CREATE TABLE remote_instances (
    host                 TEXT NOT NULL PRIMARY KEY,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    quarantine_level     INTEGER NOT NULL DEFAULT 0,
    quarantined_until    INTEGER,
    last_success_at      INTEGER,
    last_failure_at      INTEGER,
    last_error           TEXT NOT NULL DEFAULT ''
) STRICT;
