-- +goose Up
-- When the reconciler found a running workbench's container paused
-- outside the portal (`docker pause`); NULL when it is not. The proxy
-- answers "paused" for it rather than wait on a Jupyter that cannot
-- answer, and its pages say so. Cleared when it is unpaused or leaves
-- running.
ALTER TABLE workbenches ADD COLUMN paused_at DATETIME;

-- +goose Down
ALTER TABLE workbenches DROP COLUMN paused_at;
