-- 004: the per-host cap of SPEC §2 as a count the lease reads (issue 13,
-- PostgreSQL's 005).
--
-- host_slots has one row per remote host that was ever leased: in_flight is
-- the number of its jobs in state leased, whoever holds them (this process,
-- or an operator's command on the same file). The lease reads it to take no
-- more than the cap (adapters/sqlite/jobs.go, leaseSQL); the lease runs
-- under SQLite's one write lock, so what it reads is the newest count and
-- no other write comes between the read and the lease.
--
-- The triggers keep the count, inside the very statement that moves a job
-- into or out of leased: the lease, a settlement, the reaper, an enqueue of
-- a leased job, a delete, and any statement written later or typed by an
-- operator. So in_flight equals the leased rows of its host at every
-- commit, with no statement of the store having to remember it
-- (TestHostSlotsMatchLeasedRowsUnderChaos checks it).
CREATE TABLE host_slots (
    host      TEXT NOT NULL PRIMARY KEY,
    in_flight INTEGER NOT NULL DEFAULT 0 CHECK (in_flight >= 0)
) STRICT;

INSERT INTO host_slots (host, in_flight)
SELECT host, count(*) FROM jobs WHERE state = 'leased' GROUP BY host;

CREATE TRIGGER jobs_slot_taken_by_insert AFTER INSERT ON jobs
WHEN NEW.state = 'leased' BEGIN
    INSERT INTO host_slots (host, in_flight) VALUES (NEW.host, 1)
        ON CONFLICT (host) DO UPDATE SET in_flight = in_flight + 1;
END;

CREATE TRIGGER jobs_slot_taken AFTER UPDATE OF state, host ON jobs
WHEN NEW.state = 'leased' AND (OLD.state <> 'leased' OR OLD.host <> NEW.host) BEGIN
    INSERT INTO host_slots (host, in_flight) VALUES (NEW.host, 1)
        ON CONFLICT (host) DO UPDATE SET in_flight = in_flight + 1;
END;

CREATE TRIGGER jobs_slot_given_back AFTER UPDATE OF state, host ON jobs
WHEN OLD.state = 'leased' AND (NEW.state <> 'leased' OR OLD.host <> NEW.host) BEGIN
    UPDATE host_slots SET in_flight = in_flight - 1 WHERE host = OLD.host;
END;

CREATE TRIGGER jobs_slot_given_back_by_delete AFTER DELETE ON jobs
WHEN OLD.state = 'leased' BEGIN
    UPDATE host_slots SET in_flight = in_flight - 1 WHERE host = OLD.host;
END;
