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

COMMIT;
