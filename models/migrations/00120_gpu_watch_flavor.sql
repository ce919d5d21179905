-- +goose Up
-- "Notify me when flavor X can start" (issue 17): a GPU watch may name a
-- flavor instead of only a GPU model; it fires when enough units of the
-- flavor's kind (whole GPUs, MIG instances of its profile, slices) are free
-- for it, beyond what queued launches wait for. NULL: a watch on the model
-- (one free GPU is enough). No foreign key (flavors are disabled, never
-- deleted; and a referencing column could not be dropped going down).
ALTER TABLE gpu_watches ADD COLUMN flavor_id INTEGER;

-- +goose Down
ALTER TABLE gpu_watches DROP COLUMN flavor_id;
