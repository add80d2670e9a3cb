-- 021: moderation (SPEC §11).
--
-- An account's status: active, or pending while the operator has not
-- approved its sign-up, with what the person wrote when asking to join.
-- The accounts stored before are active: a constant default fills them in
-- without rewriting the table. The listing of sign-ups to approve reads
-- root_users_status_created_idx (EnsureIndexes).
BEGIN;

ALTER TABLE root_users
    ADD COLUMN IF NOT EXISTS status text NOT NULL DEFAULT 'active',
    ADD COLUMN IF NOT EXISTS reason text NOT NULL DEFAULT '',
    ADD CONSTRAINT root_users_status_check CHECK (status IN ('active', 'pending'));

-- The operator's domain blocks and allows, one row per normalized domain
-- (the primary key: a second block of a domain fails, and the store says
-- so), with the fields of Mastodon's domain blocks, kept so that a list
-- imported from its CSV exports again as it came. COLLATE "C": listed in
-- byte order, as Go compares strings.
CREATE TABLE IF NOT EXISTS domain_blocks (
    domain         text COLLATE "C" PRIMARY KEY,
    severity       text        NOT NULL CHECK (severity IN ('silence', 'suspend')),
    reason         text        NOT NULL DEFAULT '',
    public_comment text        NOT NULL DEFAULT '',
    reject_media   boolean     NOT NULL DEFAULT false,
    reject_reports boolean     NOT NULL DEFAULT false,
    obfuscate      boolean     NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS domain_allows (
    domain     text COLLATE "C" PRIMARY KEY,
    created_at timestamptz NOT NULL
);

-- The reports (Flags) other servers send: one per Flag (reports_activity_id_key,
-- the unique key AddReport's ON CONFLICT needs), resolved_at NULL while
-- open. EnsureIndexes lists them newest first (reports_created_at_idx).
CREATE TABLE IF NOT EXISTS reports (
    id           text COLLATE "C" PRIMARY KEY,
    activity_id  text        NOT NULL,
    reporter_uri text        NOT NULL,
    targets      text[]      NOT NULL DEFAULT '{}',
    objects      text[]      NOT NULL DEFAULT '{}',
    comment      text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    resolved_at  timestamptz,
    resolution   text        NOT NULL DEFAULT '',
    CONSTRAINT reports_activity_id_key UNIQUE (activity_id)
);

COMMIT;
