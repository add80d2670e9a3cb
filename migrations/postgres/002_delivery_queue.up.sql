-- 002: the durable delivery queue and the per-host circuit breakers (SPEC §2).
--
-- Only the keys live here: the unique ones 004 and the stores' ON CONFLICT
-- clauses need. The query indexes (jobs_state_run_at_idx, jobs_host_state_idx,
-- jobs_finished_at_idx) are made by EnsureIndexes on every start, one list
-- for every index of SPEC §4.
BEGIN;

CREATE TABLE jobs (
    -- COLLATE "C": operators page through jobs by id in byte order, as Go
    -- compares the UUIDv7 strings.
    id          text COLLATE "C" NOT NULL,
    -- Insertion order: the lease's tie-break between jobs due at the same
    -- instant (a fan-out enqueues thousands with one RunAt).
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    dedupe_key  text NOT NULL,
    activity_id text NOT NULL,
    inbox       text NOT NULL,
    host        text COLLATE "C" NOT NULL,
    sender_id   text NOT NULL,
    key_id      text NOT NULL,
    -- bytea, not jsonb: the activity is sent exactly as it was signed.
    payload     bytea NOT NULL,
    state       text NOT NULL,
    attempts    integer NOT NULL DEFAULT 0,
    run_at      timestamptz NOT NULL,
    lease_owner text NOT NULL DEFAULT '',
    lease_token text NOT NULL DEFAULT '',
    lease_until timestamptz,
    last_error  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    finished_at timestamptz,
    CONSTRAINT jobs_pkey PRIMARY KEY (id),
    CONSTRAINT jobs_dedupe_key_key UNIQUE (dedupe_key),
    CONSTRAINT jobs_state_check CHECK (state IN ('queued', 'leased', 'succeeded', 'dead')),
    CONSTRAINT jobs_lease_check CHECK (state <> 'leased' OR (lease_token <> '' AND lease_until IS NOT NULL))
);

CREATE TABLE remote_instances (
    host                 text COLLATE "C" NOT NULL,
    consecutive_failures integer NOT NULL DEFAULT 0,
    quarantine_level     integer NOT NULL DEFAULT 0,
    quarantined_until    timestamptz,
    last_success_at      timestamptz,
    last_failure_at      timestamptz,
    last_error           text NOT NULL DEFAULT '',
    CONSTRAINT remote_instances_pkey PRIMARY KEY (host)
);

COMMIT;
