-- +goose Up
-- A delete the owner asked for is written down before it starts, so that
-- a portal killed half-way (the container killed, the record not yet
-- marked) finishes it on its next reconciliation instead of leaving the
-- workbench "stopped: the container exited". delete_data says whether the
-- home volume goes too. Both are cleared when the delete is done; the
-- partial index keeps the reconciler's look for unfinished ones cheap.
ALTER TABLE workbenches ADD COLUMN delete_requested_at DATETIME;
ALTER TABLE workbenches ADD COLUMN delete_data BOOLEAN NOT NULL DEFAULT 0;
CREATE INDEX workbenches_delete_pending ON workbenches(delete_requested_at) WHERE delete_requested_at IS NOT NULL;

-- +goose Down
DROP INDEX workbenches_delete_pending;
ALTER TABLE workbenches DROP COLUMN delete_data;
ALTER TABLE workbenches DROP COLUMN delete_requested_at;
