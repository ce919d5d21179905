-- +goose Up
-- The utilisation dashboard counts MIG instances and shared slices as the
-- fraction of their GPU they are (docs/telemetry.md, "Utilisation and idle
-- cost"): each unit minute records how many units of its GPU the row
-- stands for (a MIG instance: 1; a slice holder: the slices it holds) and
-- how many units the GPU had (its MIG instances; its slices). gpu_units 0
-- marks rows rolled up before this column: a MIG row then counts as one of
-- the instance rows of its minute, a slice row as an unknown fraction.
ALTER TABLE gpu_unit_minutes ADD COLUMN units INTEGER NOT NULL DEFAULT 1;
ALTER TABLE gpu_unit_minutes ADD COLUMN gpu_units INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE gpu_unit_minutes DROP COLUMN gpu_units;
ALTER TABLE gpu_unit_minutes DROP COLUMN units;
