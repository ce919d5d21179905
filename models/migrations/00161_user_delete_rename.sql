-- +goose Up
-- Renaming and deleting accounts (models/user_delete.go, user_rename.go).
--
-- home_key is the name the user's home volume and container labels carry
-- (wb-home-<install>-<home_key>): the username when the account was made,
-- kept through a rename, since the engine cannot rename a volume. Unique,
-- so a new account given a renamed one's old name gets a home of its own.
ALTER TABLE users ADD COLUMN home_key TEXT NOT NULL DEFAULT '';
UPDATE users SET home_key = username;
CREATE UNIQUE INDEX users_home_key ON users(home_key COLLATE NOCASE) WHERE home_key <> '';
-- deleted_at: an administrator deleted the account; the row stays as a
-- tombstone (renamed deleted-<id>, disabled, no secrets) because the ledger
-- and the audit log, which are append-only, refer to it. erased_at: its
-- workbenches and home volume are gone too; until then the portal's
-- reconciliation finishes that work (the request that asked may be gone).
ALTER TABLE users ADD COLUMN deleted_at DATETIME;
ALTER TABLE users ADD COLUMN erased_at DATETIME;
CREATE INDEX users_erase_pending ON users(id) WHERE deleted_at IS NOT NULL AND erased_at IS NULL;

-- +goose Down
DROP INDEX users_erase_pending;
ALTER TABLE users DROP COLUMN erased_at;
ALTER TABLE users DROP COLUMN deleted_at;
DROP INDEX users_home_key;
ALTER TABLE users DROP COLUMN home_key;
