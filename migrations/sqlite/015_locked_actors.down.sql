-- Drops the locks (every actor accepts at once again) and the keys before
-- the last rotations (an Update{Person} still queued then signs with the
-- current key).
ALTER TABLE groups DROP COLUMN keys_rotated_at;
ALTER TABLE groups DROP COLUMN previous_private_key_pem;
ALTER TABLE groups DROP COLUMN previous_public_key_pem;
ALTER TABLE avatars DROP COLUMN keys_rotated_at;
ALTER TABLE avatars DROP COLUMN previous_private_key_pem;
ALTER TABLE avatars DROP COLUMN previous_public_key_pem;
ALTER TABLE groups DROP COLUMN locked;
ALTER TABLE avatars DROP COLUMN locked;
