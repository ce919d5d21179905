-- +goose Up
-- Per-unit telemetry (docs/telemetry.md): the per-minute rollup of each MIG
-- instance (its own readings through its MIG device handle) and of each
-- shared slice's holder (the sum over its own processes), with the share of
-- the GPU's measured energy the unit is given. One row per unit, holder
-- and minute: a slice is keyed by the GPU's UUID and its holder, a MIG
-- instance by its MIG UUID (workbench_id '' while nobody holds it).
-- A figure that could not be read is counted apart (unread_samples,
-- mem_samples, energy_samples), never as 0.
CREATE TABLE gpu_unit_minutes (
    unit_uuid        TEXT    NOT NULL,
    workbench_id     TEXT    NOT NULL DEFAULT '',
    minute           INTEGER NOT NULL, -- unix seconds of the minute's start (UTC)
    gpu_uuid         TEXT    NOT NULL,
    kind             TEXT    NOT NULL, -- mig | slice
    profile          TEXT    NOT NULL DEFAULT '', -- MIG profile, e.g. 1g.10gb
    gpu_model        TEXT    NOT NULL DEFAULT '',
    samples          INTEGER NOT NULL,
    util_samples     INTEGER NOT NULL,
    util_sum         INTEGER NOT NULL,
    unread_samples   INTEGER NOT NULL,
    mem_samples      INTEGER NOT NULL,
    mem_used_max_mib INTEGER NOT NULL,
    energy_mj        INTEGER NOT NULL DEFAULT 0,
    energy_samples   INTEGER NOT NULL DEFAULT 0, -- sample gaps whose share was worked out
    energy_basis     TEXT    NOT NULL DEFAULT '', -- how the share was made (last of the minute)
    PRIMARY KEY (unit_uuid, workbench_id, minute)
);
CREATE INDEX gpu_unit_minutes_minute ON gpu_unit_minutes (minute);
CREATE INDEX gpu_unit_minutes_workbench ON gpu_unit_minutes (workbench_id, minute);

-- Whole GPUs: how many sample gaps of the minute had both energy counter
-- readings (0 with energy_mj 0: not measured, which is not "0 J").
ALTER TABLE gpu_minutes ADD COLUMN energy_samples INTEGER NOT NULL DEFAULT 0;

-- interval_energy: share_mj is the part of energy_mj that is a share of a
-- GPU's measured energy (MIG instance, shared slice) rather than a whole
-- GPU's own; measured_minutes counts the unit-minutes whose energy was
-- measured, so an interval with none says "not available", not 0 kWh.
ALTER TABLE interval_energy ADD COLUMN share_mj INTEGER NOT NULL DEFAULT 0;
ALTER TABLE interval_energy ADD COLUMN measured_minutes INTEGER NOT NULL DEFAULT 0;
-- The workbench API and /metrics sum a workbench's energy.
CREATE INDEX interval_energy_workbench ON interval_energy (workbench_id);

-- +goose Down
DROP INDEX interval_energy_workbench;
ALTER TABLE interval_energy DROP COLUMN measured_minutes;
ALTER TABLE interval_energy DROP COLUMN share_mj;
ALTER TABLE gpu_minutes DROP COLUMN energy_samples;
DROP TABLE gpu_unit_minutes;
