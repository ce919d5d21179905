-- +goose Up
-- Start without a GPU (issue 17): an admin names, per GPU flavor, the
-- CPU-only flavor it can run as (its "twin", priced as such); a workbench
-- records the flavor its current or last run actually used (0 = its own
-- flavor), so metering, live cost, deadlines and the page follow the shape
-- that is running.
ALTER TABLE flavors ADD COLUMN cpu_twin_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workbenches ADD COLUMN run_flavor_id INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE workbenches DROP COLUMN run_flavor_id;
ALTER TABLE flavors DROP COLUMN cpu_twin_id;
