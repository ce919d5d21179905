-- +goose Up
-- Extra HTTP ports an image's apps listen on (TensorBoard 6006, a demo app),
-- reachable at /wb/{id}/port/{n}/: a JSON array of port numbers.
ALTER TABLE images ADD COLUMN extra_ports TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE images DROP COLUMN extra_ports;
