-- +goose Up
-- Idle-timeout bounds per quota: the range of idle timeouts a user may pick
-- for a workbench (within the portal-wide bounds).
ALTER TABLE quotas ADD COLUMN min_idle_minutes INTEGER;
ALTER TABLE quotas ADD COLUMN max_idle_minutes INTEGER;

-- +goose Down
ALTER TABLE quotas DROP COLUMN max_idle_minutes;
ALTER TABLE quotas DROP COLUMN min_idle_minutes;
