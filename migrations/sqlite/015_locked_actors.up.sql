-- A persona or group may approve its followers by hand
-- (manuallyApprovesFollowers). Existing actors keep accepting at once.
ALTER TABLE avatars ADD COLUMN locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE groups ADD COLUMN locked INTEGER NOT NULL DEFAULT 0;
