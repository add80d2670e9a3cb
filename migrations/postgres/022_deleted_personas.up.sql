-- 022: deleted personas (SPEC §3, §11). A persona's deletion marks its
-- avatar (its key stays until the deliveries of its Delete are settled,
-- then the row goes) and its name's reservation, which stays for good so
-- no one can take over the identity other servers remember. Both columns
-- are NULL for what lives: adding them rewrites nothing. The deletions
-- still to finish are read from avatars_retired_idx (also EnsureIndexes).
BEGIN;

ALTER TABLE avatars ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
ALTER TABLE reserved_names ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
CREATE INDEX IF NOT EXISTS avatars_retired_idx ON avatars (id COLLATE "C") WHERE deleted_at IS NOT NULL;

COMMIT;
