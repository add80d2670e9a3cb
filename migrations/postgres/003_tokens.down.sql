-- 003 down: drop the tokens; every client must sign in again.
BEGIN;

DROP TABLE tokens;

COMMIT;
