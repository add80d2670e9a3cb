-- 023 down: the blocks and mutes go with their table (an older build
-- would not read them); a persona's blocked actors can follow it again
-- and receive its posts after a step down.
BEGIN;

DROP TABLE IF EXISTS actor_blocks;

COMMIT;
