-- 001 down: drop every table 001 created, and so every account, actor (with
-- its keys), post, follow and reservation: only for a database that is to be
-- thrown away, or restored from a `herald backup` copy afterwards.
DROP TABLE reserved_names;
DROP TABLE followers;
DROP TABLE dm_posts;
DROP TABLE posts;
DROP TABLE foreign_avatars;
DROP TABLE groups;
DROP TABLE avatars;
DROP TABLE root_users;
