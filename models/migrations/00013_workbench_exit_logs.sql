-- +goose Up
-- What a person needs to act on a failure after the container is gone: the
-- last lines the container wrote before it exited, and the raw error behind
-- a failure's plain-sentence reason.
ALTER TABLE workbenches ADD COLUMN exit_logs TEXT NOT NULL DEFAULT '';
ALTER TABLE workbenches ADD COLUMN reason_details TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE workbenches DROP COLUMN reason_details;
ALTER TABLE workbenches DROP COLUMN exit_logs;
