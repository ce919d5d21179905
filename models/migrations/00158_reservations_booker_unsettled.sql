-- +goose Up
-- A launch and the budget's timer read what the user's own bookings not
-- settled yet set aside of the month's budget (what they would bill left
-- unused): found by booker, not by scanning every booking.
CREATE INDEX reservations_booker_unsettled ON reservations(user_id, starts_at) WHERE settled_at IS NULL;

-- +goose Down
DROP INDEX reservations_booker_unsettled;
