-- 006 down: forget when posts were edited (their edited content stays) and
-- every Like and Announce count.
BEGIN;

DROP TABLE IF EXISTS reactions;
ALTER TABLE posts DROP COLUMN IF EXISTS updated;
ALTER TABLE dm_posts DROP COLUMN IF EXISTS updated;

COMMIT;
