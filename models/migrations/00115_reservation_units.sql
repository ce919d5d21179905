-- +goose Up
-- Reservations of every kind of unit (issue 12 §4): whole GPUs of a model
-- (as before), MIG instances of a profile on GPUs of a model, or slices of
-- the shared GPUs of a model. A booking is settled once over: the
-- unit-seconds its booker did not use, and what was billed for them (only
-- while an admin has "bill reserved-but-unused time" on).
ALTER TABLE reservations ADD COLUMN unit_kind TEXT NOT NULL DEFAULT 'gpu';
ALTER TABLE reservations ADD COLUMN mig_profile TEXT NOT NULL DEFAULT '';
ALTER TABLE reservations ADD COLUMN settled_at DATETIME;
ALTER TABLE reservations ADD COLUMN used_unit_seconds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reservations ADD COLUMN unused_unit_seconds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reservations ADD COLUMN billed_micros INTEGER NOT NULL DEFAULT 0;
CREATE INDEX reservations_unsettled ON reservations(ends_at) WHERE settled_at IS NULL;

-- A launch may name the booking it uses (the "reservation" launch field).
ALTER TABLE workbenches ADD COLUMN reservation_id INTEGER;

-- The cap on what a user may book: unit-hours per calendar week (Monday
-- 00:00 UTC), per scope as quotas are (default, group, user). No row for
-- a scope: it inherits; no default row: no cap.
CREATE TABLE reservation_caps (
    scope               TEXT NOT NULL CHECK (scope IN ('default', 'group', 'user')),
    subject_id          INTEGER NOT NULL DEFAULT 0,
    unit_hours_per_week INTEGER NOT NULL CHECK (unit_hours_per_week >= 0),
    updated_by          TEXT NOT NULL DEFAULT '',
    updated_at          DATETIME NOT NULL,
    PRIMARY KEY (scope, subject_id)
);

-- +goose Down
DROP TABLE reservation_caps;
ALTER TABLE workbenches DROP COLUMN reservation_id;
DROP INDEX reservations_unsettled;
ALTER TABLE reservations DROP COLUMN billed_micros;
ALTER TABLE reservations DROP COLUMN unused_unit_seconds;
ALTER TABLE reservations DROP COLUMN used_unit_seconds;
ALTER TABLE reservations DROP COLUMN settled_at;
ALTER TABLE reservations DROP COLUMN mig_profile;
ALTER TABLE reservations DROP COLUMN unit_kind;
