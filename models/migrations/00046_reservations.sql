-- +goose Up
-- Reservations (issue 12 §4): N GPUs of a model booked for a window. While
-- it is active, the booked units not in use by the booker go to nobody
-- else; a booking unused NoShow after its start is released.
CREATE TABLE reservations (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id        INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    gpu_model      TEXT NOT NULL,
    units          INTEGER NOT NULL CHECK (units > 0),
    starts_at      DATETIME NOT NULL,
    ends_at        DATETIME NOT NULL,
    note           TEXT NOT NULL DEFAULT '',
    created_by     TEXT NOT NULL,
    created_at     DATETIME NOT NULL,
    released_at    DATETIME,
    release_reason TEXT NOT NULL DEFAULT '',
    CHECK (ends_at > starts_at)
);
CREATE INDEX reservations_window ON reservations(ends_at, starts_at) WHERE released_at IS NULL;

-- +goose Down
DROP TABLE reservations;
