-- A persona or group may approve its followers by hand
-- (manuallyApprovesFollowers). Existing actors keep accepting at once.
BEGIN;
ALTER TABLE avatars ADD COLUMN locked boolean NOT NULL DEFAULT false;
ALTER TABLE groups ADD COLUMN locked boolean NOT NULL DEFAULT false;
COMMIT;
