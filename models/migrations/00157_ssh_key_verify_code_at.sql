-- +goose Up
-- When a pending key's verify_code was issued (NULL once verified): the
-- code verifies the key only for a bounded time after it (the SSH gateway
-- refuses an older one, and its owner can ask for a new code). Keys that
-- are pending now count from when they were added, as new ones do.
ALTER TABLE ssh_keys ADD COLUMN verify_code_at DATETIME;
UPDATE ssh_keys SET verify_code_at = created_at WHERE verified_at IS NULL;

-- +goose Down
ALTER TABLE ssh_keys DROP COLUMN verify_code_at;
