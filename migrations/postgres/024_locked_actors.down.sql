-- Drops the locks (every actor accepts at once again) and the keys before
-- the last rotations (an Update{Person} still queued then signs with the
-- current key).
BEGIN;
ALTER TABLE groups DROP COLUMN keys_rotated_at, DROP COLUMN previous_private_key_pem,
    DROP COLUMN previous_public_key_pem, DROP COLUMN locked;
ALTER TABLE avatars DROP COLUMN keys_rotated_at, DROP COLUMN previous_private_key_pem,
    DROP COLUMN previous_public_key_pem, DROP COLUMN locked;
COMMIT;
