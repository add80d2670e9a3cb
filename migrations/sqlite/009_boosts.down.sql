-- 009 down: forget every boost (the boosted posts stay).
DROP TABLE boosts;
