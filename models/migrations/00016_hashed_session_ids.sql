-- +goose Up
-- Session ids are now stored as their SHA-256 (models/session_store.go), so
-- a copy of the database (a backup) holds no usable session. Rows written
-- before hold raw ids that no lookup would find again: remove them. Everyone
-- logs in once more after the upgrade.
DELETE FROM sessions;

-- +goose Down
DELETE FROM sessions;
