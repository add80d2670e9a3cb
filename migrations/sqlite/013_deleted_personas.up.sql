-- 013: deleted personas (SPEC §3, §11). A persona's deletion marks its
-- avatar (its key stays until the deliveries of its Delete are settled,
-- then the row goes) and its name's reservation, which stays for good so
-- no one can take over the identity other servers remember.
ALTER TABLE avatars ADD COLUMN deleted_at INTEGER;
ALTER TABLE reserved_names ADD COLUMN deleted_at INTEGER;
CREATE INDEX avatars_retired_idx ON avatars (id) WHERE deleted_at IS NOT NULL;
