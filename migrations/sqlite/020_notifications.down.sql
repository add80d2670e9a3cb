-- 020 down: drops the notifications; every persona's are lost (an older
-- build has none).
DROP TABLE IF EXISTS notifications;
