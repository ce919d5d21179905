-- +goose Up
-- Extra HTTP ports a user declares on their own workbench (issue 17, "the
-- image or the user declares extra HTTP ports"): JSON list of ints, like
-- images.extra_ports; reached at /wb/{id}/port/{n}/ with the same checks.
ALTER TABLE workbenches ADD COLUMN extra_ports TEXT;

-- +goose Down
ALTER TABLE workbenches DROP COLUMN extra_ports;
