-- Bytes on disk per queued job in PostgreSQL, for each layout the jobs
-- table has had (issue 15's goal is 250 B, table and indexes, plus the body
-- once). Every table carries the queue's indexes of its time (indexes.go).
--
--   wide    before migration 015: every field of the job in its row, as text.
--   narrow  015-017: the per-fan-out columns (activity, sender, key id,
--           body) in a row of their own (job_activities) named by a bigint,
--           the dedupe key as bytes (16 of them since 016), the inbox as its
--           path under the job's host (017).
--   uuid    018: the job id and the dedupe key as uuid.
--   lean    019: no seq (the queue's index on run_at alone, which B-tree
--           deduplication keeps once per run_at), NULL for an empty lease
--           owner, lease token and last error.
--
-- 200,000 rows shaped as the followers benchmark's: a fan-out's pages of
-- 1,000 jobs, each page one run_at, followers in URI order and so a
-- page's inboxes mostly on one host (here exactly: 200 hosts of 1,000),
-- ids time-ordered from page to page (UUIDv7) and ascending within a page
-- (the fan-out gives a page's ids in dedupe-key order), dedupe keys
-- random.
--
--   psql -h 127.0.0.1 -U postgres test -f test/bench/sql/jobs-row-size.sql
--
-- It works in a schema of its own, dropped at the end.
DROP SCHEMA IF EXISTS herald_rowsize CASCADE;
CREATE SCHEMA herald_rowsize;
SET search_path = herald_rowsize;

CREATE TABLE src AS
SELECT i, (lpad(to_hex(i / 1000), 12, '0') || substr(md5(i::text), 13))::uuid AS id, sha256(('a' || i)::bytea) AS dedupe_key,
	'127.0.0.1:' || (20000 + i / 1000) AS host,
	'/users/f' || i || '/inbox' AS path, timestamptz '2026-01-01' + (i / 1000) * interval '1 ms' AS run_at
FROM generate_series(1, 200000) i;

CREATE TABLE wide (
	id text COLLATE "C" NOT NULL PRIMARY KEY, seq bigint GENERATED ALWAYS AS IDENTITY,
	dedupe_key text NOT NULL UNIQUE, activity_id text NOT NULL, inbox text NOT NULL, host text COLLATE "C" NOT NULL,
	sender_id text NOT NULL, key_id text NOT NULL, body_id text COLLATE "C" NOT NULL DEFAULT '', state text NOT NULL,
	attempts int NOT NULL DEFAULT 0, run_at timestamptz NOT NULL, lease_owner text NOT NULL DEFAULT '',
	lease_token text NOT NULL DEFAULT '', lease_until timestamptz, last_error text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL, finished_at timestamptz);
CREATE INDEX ON wide (run_at, seq) WHERE state = 'queued';
CREATE INDEX ON wide (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX ON wide (host, run_at) WHERE state = 'queued';
CREATE INDEX ON wide (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX ON wide (body_id);

CREATE TABLE narrow (
	id text COLLATE "C" NOT NULL PRIMARY KEY, seq bigint GENERATED ALWAYS AS IDENTITY,
	dedupe_key bytea NOT NULL UNIQUE, inbox_ref text NOT NULL, host text COLLATE "C" NOT NULL,
	state text NOT NULL, attempts int NOT NULL DEFAULT 0, run_at timestamptz NOT NULL,
	lease_owner text NOT NULL DEFAULT '', lease_token text NOT NULL DEFAULT '', lease_until timestamptz,
	last_error text NOT NULL DEFAULT '', created_at timestamptz NOT NULL, finished_at timestamptz,
	activity bigint NOT NULL, dedupe_full bytea);
CREATE INDEX ON narrow (run_at, seq) WHERE state = 'queued';
CREATE INDEX ON narrow (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX ON narrow (host, run_at) WHERE state = 'queued';
CREATE INDEX ON narrow (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX ON narrow (activity);

CREATE TABLE uuid (LIKE narrow INCLUDING DEFAULTS INCLUDING IDENTITY);
ALTER TABLE uuid ALTER COLUMN id TYPE uuid USING id::uuid, ALTER COLUMN dedupe_key TYPE uuid USING encode(dedupe_key, 'hex')::uuid,
	ADD PRIMARY KEY (id), ADD UNIQUE (dedupe_key);
CREATE INDEX ON uuid (run_at, seq) WHERE state = 'queued';
CREATE INDEX ON uuid (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX ON uuid (host, run_at) WHERE state = 'queued';
CREATE INDEX ON uuid (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX ON uuid (activity);

CREATE TABLE lean (
	id uuid NOT NULL PRIMARY KEY, dedupe_key uuid NOT NULL UNIQUE, inbox_ref text NOT NULL, host text COLLATE "C" NOT NULL,
	state text NOT NULL, attempts int NOT NULL DEFAULT 0, run_at timestamptz NOT NULL,
	lease_owner text, lease_token text, lease_until timestamptz, last_error text,
	created_at timestamptz NOT NULL, finished_at timestamptz, activity bigint NOT NULL, dedupe_full bytea);
CREATE INDEX ON lean (run_at) WHERE state = 'queued';
CREATE INDEX ON lean (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX ON lean (host, run_at) WHERE state = 'queued';
CREATE INDEX ON lean (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX ON lean (activity);

INSERT INTO wide (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, run_at, created_at)
SELECT id::text, encode(dedupe_key, 'hex'),
	'http://127.0.0.1:8080/users/alice/statuses/01a2418a-d1aa-725e-b19e-1b6c593bd18b/activity',
	'http://' || host || path, host, '01a2418a-d1aa-725e-b19e-1b6c593bd18c', 'http://127.0.0.1:8080/users/alice#main-key',
	encode(sha256('body'::bytea), 'hex'), 'queued', run_at, run_at
FROM src ORDER BY i / 1000, id;

INSERT INTO narrow (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at)
SELECT id::text, substr(dedupe_key, 1, 16), 1, path, host, 'queued', run_at, run_at
FROM src ORDER BY i / 1000, id;

INSERT INTO uuid (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at)
SELECT id, encode(substr(dedupe_key, 1, 16), 'hex')::uuid, 1, path, host, 'queued', run_at, run_at
FROM src ORDER BY i / 1000, id;

INSERT INTO lean (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at)
SELECT id, encode(substr(dedupe_key, 1, 16), 'hex')::uuid, 1, path, host, 'queued', run_at, run_at
FROM src ORDER BY i / 1000, id;

SELECT c.relname AS relation, round(pg_relation_size(c.oid) / 200000.0, 1) AS bytes_per_job
FROM pg_class c
WHERE c.relnamespace = 'herald_rowsize'::regnamespace AND c.relkind IN ('r', 'i') AND c.relname <> 'src'
UNION ALL
SELECT t || ' (table, TOAST and indexes)', round(pg_total_relation_size(t::regclass) / 200000.0, 1)
FROM unnest(ARRAY['wide', 'narrow', 'uuid', 'lean']) t
ORDER BY 1;

DROP SCHEMA herald_rowsize CASCADE;
