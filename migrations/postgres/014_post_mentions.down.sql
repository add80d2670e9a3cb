-- 014 down: forget who posts mention (the posts stay).
BEGIN;

DROP TABLE IF EXISTS post_mentions;

COMMIT;
