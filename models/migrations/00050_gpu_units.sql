-- +goose Up
-- GPU units (issue 12 §1): a flavor asks for whole GPUs of a model, MIG
-- instances of a profile, or one slice of a shared GPU. Allocations are
-- keyed by the unit they bind, not the physical GPU: a shared GPU is bound
-- by several workbenches, one slice each, and a MIG-enabled GPU by one
-- workbench per instance. gpu_uuid stays the physical GPU every unit lies on.
ALTER TABLE flavors ADD COLUMN unit_kind TEXT NOT NULL DEFAULT 'gpu';
ALTER TABLE flavors ADD COLUMN mig_profile TEXT NOT NULL DEFAULT '';

-- An admin shares a GPU in N slices (0 = not shared). The MPS limits are
-- optional and off (0) by default; see docs/gpu-units.md.
ALTER TABLE gpu_states ADD COLUMN shared_slices INTEGER NOT NULL DEFAULT 0;
ALTER TABLE gpu_states ADD COLUMN mps_memory_mib INTEGER NOT NULL DEFAULT 0;
ALTER TABLE gpu_states ADD COLUMN mps_thread_percent INTEGER NOT NULL DEFAULT 0;

-- What a usage interval held, so each kind is priced at its own rate.
ALTER TABLE usage_intervals ADD COLUMN unit_kind TEXT NOT NULL DEFAULT 'gpu';
ALTER TABLE usage_intervals ADD COLUMN unit_profile TEXT NOT NULL DEFAULT '';

CREATE TABLE gpu_allocations_units (
    unit_id      TEXT PRIMARY KEY, -- GPU UUID, MIG UUID, or '<GPU UUID>/slice/<k>'
    kind         TEXT NOT NULL DEFAULT 'gpu' CHECK (kind IN ('gpu', 'mig', 'slice')),
    gpu_uuid     TEXT NOT NULL,    -- the physical GPU the unit lies on
    profile      TEXT NOT NULL DEFAULT '',
    slice        INTEGER NOT NULL DEFAULT 0,
    workbench_id TEXT NOT NULL REFERENCES workbenches(id),
    gpu_model    TEXT NOT NULL,
    allocated_at DATETIME NOT NULL
);
INSERT INTO gpu_allocations_units (unit_id, kind, gpu_uuid, workbench_id, gpu_model, allocated_at)
SELECT gpu_uuid, 'gpu', gpu_uuid, workbench_id, gpu_model, allocated_at FROM gpu_allocations;
DROP TABLE gpu_allocations;
ALTER TABLE gpu_allocations_units RENAME TO gpu_allocations;
CREATE INDEX gpu_allocations_workbench ON gpu_allocations(workbench_id);
CREATE INDEX gpu_allocations_gpu ON gpu_allocations(gpu_uuid);
-- A whole GPU is bound once: the last line of defence behind the
-- transaction's checks (a slice or MIG unit can never share its unit_id).
CREATE UNIQUE INDEX gpu_allocations_whole ON gpu_allocations(gpu_uuid) WHERE kind = 'gpu';

-- Rates per unit kind: per GPU-hour (gpu), per MIG profile-hour (mig, keyed
-- by profile in gpu_model), per slice-hour (slice, keyed by GPU model).
CREATE TABLE price_rates_units (
    id             INTEGER PRIMARY KEY,
    resource       TEXT NOT NULL CHECK (resource IN ('gpu', 'mig', 'slice', 'cpu', 'memory', 'storage')),
    gpu_model      TEXT NOT NULL DEFAULT '',
    micros         INTEGER NOT NULL CHECK (micros >= 0),
    effective_from DATETIME NOT NULL,
    is_default     INTEGER NOT NULL DEFAULT 0,
    created_by     TEXT NOT NULL,
    created_at     DATETIME NOT NULL
);
INSERT INTO price_rates_units SELECT id, resource, gpu_model, micros, effective_from, is_default, created_by, created_at FROM price_rates;
DROP TABLE price_rates;
ALTER TABLE price_rates_units RENAME TO price_rates;
CREATE INDEX price_rates_lookup ON price_rates(resource, gpu_model, effective_from);

-- +goose Down
DELETE FROM price_rates WHERE resource IN ('mig', 'slice');
CREATE TABLE price_rates_old (
    id             INTEGER PRIMARY KEY,
    resource       TEXT NOT NULL CHECK (resource IN ('gpu', 'cpu', 'memory', 'storage')),
    gpu_model      TEXT NOT NULL DEFAULT '',
    micros         INTEGER NOT NULL CHECK (micros >= 0),
    effective_from DATETIME NOT NULL,
    is_default     INTEGER NOT NULL DEFAULT 0,
    created_by     TEXT NOT NULL,
    created_at     DATETIME NOT NULL
);
INSERT INTO price_rates_old SELECT * FROM price_rates;
DROP TABLE price_rates;
ALTER TABLE price_rates_old RENAME TO price_rates;
CREATE INDEX price_rates_lookup ON price_rates(resource, gpu_model, effective_from);

CREATE TABLE gpu_allocations_old (
    gpu_uuid     TEXT PRIMARY KEY,
    workbench_id TEXT NOT NULL REFERENCES workbenches(id),
    gpu_model    TEXT NOT NULL,
    allocated_at DATETIME NOT NULL
);
INSERT INTO gpu_allocations_old SELECT gpu_uuid, workbench_id, gpu_model, MIN(allocated_at) FROM gpu_allocations WHERE kind = 'gpu' GROUP BY gpu_uuid;
DROP TABLE gpu_allocations;
ALTER TABLE gpu_allocations_old RENAME TO gpu_allocations;
CREATE INDEX gpu_allocations_workbench ON gpu_allocations(workbench_id);

ALTER TABLE usage_intervals DROP COLUMN unit_profile;
ALTER TABLE usage_intervals DROP COLUMN unit_kind;
ALTER TABLE gpu_states DROP COLUMN mps_thread_percent;
ALTER TABLE gpu_states DROP COLUMN mps_memory_mib;
ALTER TABLE gpu_states DROP COLUMN shared_slices;
ALTER TABLE flavors DROP COLUMN mig_profile;
ALTER TABLE flavors DROP COLUMN unit_kind;
