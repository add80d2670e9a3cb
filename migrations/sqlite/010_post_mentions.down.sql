-- 010 down: forget who posts mention (the posts stay).
DROP TABLE post_mentions;
