-- 012 (PostgreSQL's 021): moderation (SPEC §11).
--
-- An account's status: active, or pending while the operator has not
-- approved its sign-up, with what the person wrote when asking to join.
-- The accounts stored before are active (the default fills them in). The
-- listing of sign-ups to approve reads root_users_status_created_idx
-- (EnsureIndexes).
ALTER TABLE root_users ADD COLUMN status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'pending'));
ALTER TABLE root_users ADD COLUMN reason TEXT NOT NULL DEFAULT '';
