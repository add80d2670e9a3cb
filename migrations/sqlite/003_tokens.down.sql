-- 003 down: drop the tokens; every client must sign in again.
DROP TABLE tokens;
