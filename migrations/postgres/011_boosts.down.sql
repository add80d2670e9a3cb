-- 011 down: forget every boost (the boosted posts stay).
BEGIN;

DROP TABLE IF EXISTS boosts;

COMMIT;
