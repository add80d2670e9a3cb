-- 021 down: the accounts lose their status. An older build knows none: a
-- sign-up still pending becomes an account that signs in, so approve or
-- reject the pending sign-ups before stepping down. The blocks, allows
-- and reports go with their tables (an older build would not read them):
-- export the blocks (CSV) first to keep them.
BEGIN;

DROP TABLE IF EXISTS reports;
DROP TABLE IF EXISTS domain_allows;
DROP TABLE IF EXISTS domain_blocks;

DROP INDEX IF EXISTS root_users_status_created_idx;
ALTER TABLE root_users
    DROP CONSTRAINT IF EXISTS root_users_status_check,
    DROP COLUMN IF EXISTS reason,
    DROP COLUMN IF EXISTS status;

COMMIT;
