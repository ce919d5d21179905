-- +goose Up
-- A quota on home storage (models.Limits.MaxStorageGiB): the GiB a user's
-- home volumes may hold, checked against the last metering of them.
ALTER TABLE quotas ADD COLUMN max_storage_gib INTEGER;
-- When the owner was told their home storage went over that limit
-- (orchestrator/storage_quota.go): told once per crossing, across restarts;
-- cleared when a metering finds them back under.
ALTER TABLE users ADD COLUMN storage_over_at DATETIME;

-- +goose Down
ALTER TABLE users DROP COLUMN storage_over_at;
ALTER TABLE quotas DROP COLUMN max_storage_gib;
