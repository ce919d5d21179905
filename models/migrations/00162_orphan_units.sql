-- +goose Up
-- Units held by a container of this install that no workbench record
-- names (an orphan: a restored backup does not know the workbenches
-- launched after it was taken, whose containers still run). Until the
-- orphan sweep removes the container (--orphan-grace), its GPUs, MIG
-- instances and slices are taken: a launch given one would share it with
-- the container. No reference to workbenches: the holder is unknown.
-- Reconciliation rewrites the table on every pass (models/orphan_units.go).
CREATE TABLE orphan_units (
    unit_id      TEXT PRIMARY KEY, -- as gpu_allocations: GPU UUID, MIG UUID, or '<GPU UUID>/slice/<k>'
    kind         TEXT NOT NULL CHECK (kind IN ('gpu', 'mig', 'slice')),
    gpu_uuid     TEXT NOT NULL,    -- the physical GPU the unit lies on
    container_id TEXT NOT NULL,
    container    TEXT NOT NULL,    -- its name, as pages show it
    remove_at    DATETIME NOT NULL -- when the orphan sweep removes it
);

-- +goose Down
DROP TABLE orphan_units;
