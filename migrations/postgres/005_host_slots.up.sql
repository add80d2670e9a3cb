-- 005: the per-host cap of SPEC §2 held by the whole deployment, not per
-- process (issue 13).
--
-- host_slots has one row per remote host that was ever leased: in_flight is
-- the number of its jobs in state leased, whichever process holds them. The
-- lease takes slots and the settlement, the reaper and a leased enqueue give
-- them back, each in the same statement that moves the jobs, so the count
-- is exact at every commit (adapters/postgres/jobs.go, leaseSQL). granted is
-- scratch: the slots the last lease took, which its RETURNING reads
-- (PostgreSQL 15's RETURNING sees only the new row).
--
-- Processes of an older version lease without counting: run every process
-- at this version (stop the older ones before the first new one starts).
BEGIN;

CREATE TABLE host_slots (
    host      text COLLATE "C" NOT NULL,
    in_flight integer NOT NULL DEFAULT 0,
    granted   integer NOT NULL DEFAULT 0,
    CONSTRAINT host_slots_pkey PRIMARY KEY (host),
    CONSTRAINT host_slots_in_flight_check CHECK (in_flight >= 0)
);

INSERT INTO host_slots (host, in_flight)
SELECT host, count(*) FROM jobs WHERE state = 'leased' GROUP BY host;

COMMIT;
