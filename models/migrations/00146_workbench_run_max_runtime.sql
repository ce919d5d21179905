-- +goose Up
-- The flavor's maximum runtime as it was when the current (or last) run
-- started: an admin lowering a flavor's limit must not cut short the runs
-- already going, which their owners planned by the stop time they were
-- shown (the rate of a run is its own for the same reason). NULL for runs
-- started before this column: they follow the flavor as before.
ALTER TABLE workbenches ADD COLUMN run_max_runtime_s INTEGER;

-- +goose Down
ALTER TABLE workbenches DROP COLUMN run_max_runtime_s;
