-- 031 down: drops the conversations; every persona's unread marks and
-- hidden threads are lost (an older build has none; the direct posts
-- stay).
BEGIN;

DROP TABLE IF EXISTS conversations;

COMMIT;
