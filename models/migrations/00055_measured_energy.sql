-- +goose Up
-- Measured energy (SPEC §6 rule 11) and the utilisation dashboard (§6 rule 9).
-- gpu_minutes gains the energy the GPU drew in the minute (counter deltas,
-- resets handled by the rollup) and the GPU model, so reports group by model
-- without the live inventory.
ALTER TABLE gpu_minutes ADD COLUMN energy_mj INTEGER NOT NULL DEFAULT 0;
ALTER TABLE gpu_minutes ADD COLUMN gpu_model TEXT NOT NULL DEFAULT '';
-- A user's "held vs used" reads only the minutes their workbenches held.
CREATE INDEX gpu_minutes_workbench ON gpu_minutes (workbench_id, minute);

-- interval_energy is the energy a usage interval's GPUs drew, per clock hour
-- (so a statement of any whole-hour range, a month included, sums exactly).
-- Informational: it is never charged; its cost is worked out at display time
-- from the electricity price setting. group_name is the owner's primary group
-- when the energy was booked, as on ledger lines.
CREATE TABLE interval_energy (
    interval_id  INTEGER NOT NULL REFERENCES usage_intervals(id),
    hour         INTEGER NOT NULL, -- unix seconds of the UTC hour's start
    workbench_id TEXT    NOT NULL,
    user_id      INTEGER NOT NULL,
    group_name   TEXT    NOT NULL DEFAULT '',
    gpu_model    TEXT    NOT NULL DEFAULT '',
    energy_mj    INTEGER NOT NULL,
    PRIMARY KEY (interval_id, hour)
);
CREATE INDEX interval_energy_hour ON interval_energy(hour, user_id);

-- +goose Down
DROP TABLE interval_energy;
DROP INDEX gpu_minutes_workbench;
ALTER TABLE gpu_minutes DROP COLUMN gpu_model;
ALTER TABLE gpu_minutes DROP COLUMN energy_mj;
