-- 029 down: drops the notifications; every persona's are lost (an older
-- build has none).
BEGIN;

DROP TABLE IF EXISTS notifications;

COMMIT;
