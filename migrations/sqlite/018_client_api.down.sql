-- 018 down: drops the client API's tables. Every registered application
-- and every access token is lost: each app must register and sign in again;
-- remote accounts get new ids.
DROP TABLE IF EXISTS account_ids;
DROP TABLE IF EXISTS oauth_tokens;
DROP TABLE IF EXISTS oauth_grants;
DROP TABLE IF EXISTS oauth_apps;
