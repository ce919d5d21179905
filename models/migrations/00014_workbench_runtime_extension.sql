-- +goose Up
-- Seconds the owner added to a running workbench's maximum runtime with
-- "+1 h" (like Coder's stop-deadline bump); reset to 0 on every start.
ALTER TABLE workbenches ADD COLUMN runtime_extension_s INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE workbenches DROP COLUMN runtime_extension_s;
