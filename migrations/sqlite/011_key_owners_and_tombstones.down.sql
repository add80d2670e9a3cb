-- 011 down: back to the plain index on key ids; the copies 011 deleted are
-- not restored (they are fetched again when needed). The tombstones go: a
-- Create of a deleted object is no longer refused.
DROP TABLE IF EXISTS tombstones;
DROP INDEX IF EXISTS foreign_avatars_public_key_id_key;
CREATE INDEX IF NOT EXISTS foreign_avatars_public_key_id_idx ON foreign_avatars (public_key_id);
