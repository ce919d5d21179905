-- +goose Up
-- Workbenches, the GPUs they hold, and their state history.

ALTER TABLE flavors ADD COLUMN max_runtime_s INTEGER NOT NULL DEFAULT 0; -- 0 = no limit

CREATE TABLE workbenches (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    owner_id         INTEGER NOT NULL REFERENCES users(id),
    image_id         INTEGER NOT NULL REFERENCES images(id),
    flavor_id        INTEGER NOT NULL REFERENCES flavors(id),
    state            TEXT NOT NULL,
    progress         INTEGER NOT NULL DEFAULT 0,
    reason           TEXT NOT NULL DEFAULT '',
    -- Jupyter's token: the portal injects it into every proxied request, so
    -- it must be kept readable; it only opens this one container's Jupyter.
    token            TEXT NOT NULL,
    container_id     TEXT NOT NULL DEFAULT '',
    endpoint         TEXT NOT NULL DEFAULT '',
    idle_timeout_s   INTEGER NOT NULL DEFAULT 3600,
    created_at       DATETIME NOT NULL,
    updated_at       DATETIME NOT NULL,
    started_at       DATETIME,
    stopped_at       DATETIME,
    last_activity_at DATETIME,
    deleted_at       DATETIME
);
CREATE UNIQUE INDEX workbenches_owner_name ON workbenches(owner_id, name) WHERE deleted_at IS NULL;
CREATE INDEX workbenches_state ON workbenches(state) WHERE deleted_at IS NULL;

-- One row per bound GPU. The primary key on the GPU's UUID is what makes it
-- impossible for two workbenches to hold one GPU, whatever the code above does.
CREATE TABLE gpu_allocations (
    gpu_uuid     TEXT PRIMARY KEY,
    workbench_id TEXT NOT NULL REFERENCES workbenches(id),
    gpu_model    TEXT NOT NULL,
    allocated_at DATETIME NOT NULL
);
CREATE INDEX gpu_allocations_workbench ON gpu_allocations(workbench_id);

CREATE TABLE workbench_events (
    id           INTEGER PRIMARY KEY,
    workbench_id TEXT NOT NULL REFERENCES workbenches(id),
    at           DATETIME NOT NULL,
    state        TEXT NOT NULL,
    message      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX workbench_events_wb ON workbench_events(workbench_id, id);

-- +goose Down
DROP TABLE workbench_events;
DROP TABLE gpu_allocations;
DROP TABLE workbenches;
ALTER TABLE flavors DROP COLUMN max_runtime_s;
