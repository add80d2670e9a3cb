-- 021 down: drops the bios (an older build keeps none); display names,
-- there since 001, stay.
ALTER TABLE avatars DROP COLUMN note;
