-- +goose Up
-- A booking may hold its units for a group (SPEC §3: "reservations hold
-- units for a user or group during a window"): any member may use them,
-- the booker (user_id) still made it and pays for what nobody used. A
-- group with bookings not yet settled cannot be deleted (DeleteGroup), so
-- SET NULL only ever touches settled history.
ALTER TABLE reservations ADD COLUMN group_id INTEGER REFERENCES groups(id) ON DELETE SET NULL;
CREATE INDEX reservations_group ON reservations(group_id) WHERE group_id IS NOT NULL;

-- +goose Down
DROP INDEX reservations_group;
ALTER TABLE reservations DROP COLUMN group_id;
