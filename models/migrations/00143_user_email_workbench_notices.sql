-- +goose Up
-- Whether the portal emails a user what happens to their workbenches
-- (queued launch started, preempted, stopped by the portal…). On by
-- default: the person who clicked Launch is often away when it happens.
ALTER TABLE users ADD COLUMN email_workbench_notices BOOLEAN NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE users DROP COLUMN email_workbench_notices;
