-- +goose Up
-- GPU-idle release: a running workbench of this flavor whose GPUs all
-- stayed below the idle utilisation threshold for this many seconds is
-- stopped (home kept). 0 = off, the default.
ALTER TABLE flavors ADD COLUMN gpu_idle_timeout_s INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE flavors DROP COLUMN gpu_idle_timeout_s;
