-- Bytes on disk per queued job in PostgreSQL: the jobs row before
-- migration 015 (wide) against the row since (narrow; issue 15's goal is
-- 250 B, table and indexes, plus the body once). Both tables carry the
-- queue's indexes (indexes.go); the narrow one keeps the per-fan-out
-- columns (activity, sender, key id, body) in a row of their own
-- (job_activities), referred to by a bigint, and the dedupe key as 32 raw
-- bytes. 200,000 rows shaped as the followers benchmark's. ff is the
-- tables' fillfactor: 100 (PostgreSQL's default) since resetJobsFillfactor,
-- 70 before.
--
--   psql -h 127.0.0.1 -U postgres test -v ff=100 -f test/bench/sql/jobs-row-size.sql
--
-- It works in a schema of its own, dropped at the end.
DROP SCHEMA IF EXISTS herald_rowsize CASCADE;
CREATE SCHEMA herald_rowsize;
SET search_path = herald_rowsize;

CREATE TABLE wide (
	id text COLLATE "C" NOT NULL PRIMARY KEY, seq bigint GENERATED ALWAYS AS IDENTITY,
	dedupe_key text NOT NULL UNIQUE, activity_id text NOT NULL, inbox text NOT NULL, host text COLLATE "C" NOT NULL,
	sender_id text NOT NULL, key_id text NOT NULL, body_id text COLLATE "C" NOT NULL DEFAULT '', state text NOT NULL,
	attempts int NOT NULL DEFAULT 0, run_at timestamptz NOT NULL, lease_owner text NOT NULL DEFAULT '',
	lease_token text NOT NULL DEFAULT '', lease_until timestamptz, last_error text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL, finished_at timestamptz) WITH (fillfactor = :ff);
CREATE INDEX ON wide (run_at, seq) WHERE state = 'queued';
CREATE INDEX ON wide (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX ON wide (host, run_at) WHERE state = 'queued';
CREATE INDEX ON wide (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX ON wide (body_id);

CREATE TABLE narrow (
	id text COLLATE "C" NOT NULL PRIMARY KEY, seq bigint GENERATED ALWAYS AS IDENTITY,
	dedupe_key bytea NOT NULL UNIQUE, activity bigint NOT NULL, inbox text NOT NULL, host text COLLATE "C" NOT NULL,
	state text NOT NULL, attempts int NOT NULL DEFAULT 0, run_at timestamptz NOT NULL,
	lease_owner text NOT NULL DEFAULT '', lease_token text NOT NULL DEFAULT '', lease_until timestamptz,
	last_error text NOT NULL DEFAULT '', created_at timestamptz NOT NULL, finished_at timestamptz) WITH (fillfactor = :ff);
CREATE INDEX ON narrow (run_at, seq) WHERE state = 'queued';
CREATE INDEX ON narrow (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX ON narrow (host, run_at) WHERE state = 'queued';
CREATE INDEX ON narrow (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX ON narrow (activity);

INSERT INTO wide (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, run_at, created_at)
SELECT gen_random_uuid()::text, encode(sha256(('a' || i)::bytea), 'hex'),
	'http://127.0.0.1:8080/users/alice/statuses/01a2418a-d1aa-725e-b19e-1b6c593bd18b/activity',
	'http://127.0.0.1:' || (20000 + i % 1000) || '/users/f' || i || '/inbox', '127.0.0.1:' || (20000 + i % 1000),
	'01a2418a-d1aa-725e-b19e-1b6c593bd18c', 'http://127.0.0.1:8080/users/alice#main-key',
	encode(sha256('body'::bytea), 'hex'), 'queued', now(), now()
FROM generate_series(1, 200000) i;

INSERT INTO narrow (id, dedupe_key, activity, inbox, host, state, run_at, created_at)
SELECT gen_random_uuid()::text, sha256(('a' || i)::bytea), 1,
	'http://127.0.0.1:' || (20000 + i % 1000) || '/users/f' || i || '/inbox', '127.0.0.1:' || (20000 + i % 1000),
	'queued', now(), now()
FROM generate_series(1, 200000) i;

SELECT c.relname AS relation, round(pg_relation_size(c.oid) / 200000.0) AS bytes_per_job
FROM pg_class c
WHERE c.relnamespace = 'herald_rowsize'::regnamespace AND c.relkind IN ('r', 'i')
UNION ALL
SELECT t || ' (table, TOAST and indexes)', round(pg_total_relation_size(t::regclass) / 200000.0)
FROM unnest(ARRAY['wide', 'narrow']) t
ORDER BY 1;

DROP SCHEMA herald_rowsize CASCADE;
