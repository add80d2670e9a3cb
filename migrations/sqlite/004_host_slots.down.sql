-- 004 down: drop the per-host slot counts and the triggers that keep them;
-- the jobs are untouched (an older build caps per process again, in its
-- engine).
DROP TRIGGER jobs_slot_given_back_by_delete;
DROP TRIGGER jobs_slot_given_back;
DROP TRIGGER jobs_slot_taken;
DROP TRIGGER jobs_slot_taken_by_insert;
DROP TABLE host_slots;
