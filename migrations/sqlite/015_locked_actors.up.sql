-- A persona or group may approve its followers by hand
-- (manuallyApprovesFollowers); existing actors keep accepting at once.
-- A key rotation keeps the pair before it, which signs the Update{Person}
-- announcing the new one.
ALTER TABLE avatars ADD COLUMN locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE groups ADD COLUMN locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE avatars ADD COLUMN previous_public_key_pem TEXT NOT NULL DEFAULT '';
ALTER TABLE avatars ADD COLUMN previous_private_key_pem TEXT NOT NULL DEFAULT '';
ALTER TABLE avatars ADD COLUMN keys_rotated_at INTEGER;
ALTER TABLE groups ADD COLUMN previous_public_key_pem TEXT NOT NULL DEFAULT '';
ALTER TABLE groups ADD COLUMN previous_private_key_pem TEXT NOT NULL DEFAULT '';
ALTER TABLE groups ADD COLUMN keys_rotated_at INTEGER;
