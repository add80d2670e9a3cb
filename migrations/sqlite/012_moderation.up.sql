-- 012 (PostgreSQL's 021): moderation (SPEC §11). Times are Unix
-- nanoseconds, as everywhere.
--
-- An account's status: active, or pending while the operator has not
-- approved its sign-up, with what the person wrote when asking to join.
-- The accounts stored before are active (the default fills them in). The
-- listing of sign-ups to approve reads root_users_status_created_idx
-- (EnsureIndexes).
ALTER TABLE root_users ADD COLUMN status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'pending'));
ALTER TABLE root_users ADD COLUMN reason TEXT NOT NULL DEFAULT '';

-- The operator's domain blocks and allows, one row per normalized domain
-- (the primary key: a second block of a domain fails, and the store says
-- so), with the fields of Mastodon's domain blocks, kept so that a list
-- imported from its CSV exports again as it came.
CREATE TABLE domain_blocks (
    domain         TEXT    NOT NULL PRIMARY KEY,
    severity       TEXT    NOT NULL CHECK (severity IN ('silence', 'suspend')),
    reason         TEXT    NOT NULL DEFAULT '',
    public_comment TEXT    NOT NULL DEFAULT '',
    reject_media   INTEGER NOT NULL DEFAULT 0 CHECK (reject_media IN (0, 1)),
    reject_reports INTEGER NOT NULL DEFAULT 0 CHECK (reject_reports IN (0, 1)),
    obfuscate      INTEGER NOT NULL DEFAULT 0 CHECK (obfuscate IN (0, 1)),
    created_at     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE domain_allows (
    domain     TEXT    NOT NULL PRIMARY KEY,
    created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The reports (Flags) other servers send: one per Flag (activity_id, the
-- unique key AddReport's ON CONFLICT needs), targets and objects as JSON
-- arrays, resolved_at NULL while open. EnsureIndexes lists them newest
-- first (reports_created_at_idx).
CREATE TABLE reports (
    id           TEXT    NOT NULL PRIMARY KEY,
    activity_id  TEXT    NOT NULL,
    reporter_uri TEXT    NOT NULL,
    targets      TEXT    NOT NULL DEFAULT '[]',
    objects      TEXT    NOT NULL DEFAULT '[]',
    comment      TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    resolved_at  INTEGER,
    resolution   TEXT    NOT NULL DEFAULT ''
) STRICT;
CREATE UNIQUE INDEX reports_activity_id_key ON reports (activity_id);
