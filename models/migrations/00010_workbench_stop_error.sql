-- +goose Up
-- Why the last attempt to stop a workbench failed (engine unreachable, the
-- container would not stop). Set only while the workbench is still
-- "stopping": the page shows it with "Retry stop" and "Force stop", and
-- reconciliation keeps retrying. Empty once the stop succeeds.
ALTER TABLE workbenches ADD COLUMN stop_error TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE workbenches DROP COLUMN stop_error;
