-- +goose Up
-- Why a queued workbench has no estimated start, when the queue knows:
-- 'no_max_runtime' (the workbenches holding the GPUs it waits for have no
-- maximum runtime, so nothing says when they free them); '' otherwise. A
-- bare "unknown" left a researcher unable to plan around it.
ALTER TABLE workbenches ADD COLUMN estimate_unknown TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE workbenches DROP COLUMN estimate_unknown;
