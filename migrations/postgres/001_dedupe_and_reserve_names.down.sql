-- 001 down: drop the username space and the unique indexes 001 created, so
-- the legacy tables are as the old server expects them.
--
-- What cannot come back: the duplicate rows 001 deleted. They were copies of
-- rows that remain (same actor URI, object URI or follow pair), so nothing the
-- old server could read is lost, but the copies themselves are gone.
-- The legacy tables themselves stay, even when 001 created them: they hold
-- data (the old server's or ours) that no down step may destroy.
BEGIN;

DROP TABLE reserved_names;

DROP INDEX IF EXISTS foreign_avatars_actor_uri_key;
DROP INDEX IF EXISTS posts_object_uri_key;
DROP INDEX IF EXISTS dm_posts_object_uri_key;
DROP INDEX IF EXISTS followers_pair_key;

COMMIT;
