-- A persona or group may approve its followers by hand
-- (manuallyApprovesFollowers); existing actors keep accepting at once.
-- A key rotation keeps the pair before it, which signs the Update{Person}
-- announcing the new one.
BEGIN;
ALTER TABLE avatars ADD COLUMN locked boolean NOT NULL DEFAULT false,
    ADD COLUMN previous_public_key_pem text NOT NULL DEFAULT '',
    ADD COLUMN previous_private_key_pem text NOT NULL DEFAULT '',
    ADD COLUMN keys_rotated_at timestamptz;
ALTER TABLE groups ADD COLUMN locked boolean NOT NULL DEFAULT false,
    ADD COLUMN previous_public_key_pem text NOT NULL DEFAULT '',
    ADD COLUMN previous_private_key_pem text NOT NULL DEFAULT '',
    ADD COLUMN keys_rotated_at timestamptz;
COMMIT;
