-- +goose Up
-- Home volumes are billed per GiB-month while they exist (SPEC §6 rule 4).
-- One interval per volume and size: when the measured size changes
-- noticeably, the interval closes and a new one opens at the new size.
CREATE TABLE storage_intervals (
    id             INTEGER PRIMARY KEY,
    user_id        INTEGER NOT NULL REFERENCES users(id),
    volume         TEXT NOT NULL,
    size_milli_gib INTEGER NOT NULL,
    started_at     DATETIME NOT NULL,
    heartbeat_at   DATETIME NOT NULL,
    ended_at       DATETIME,
    billed_through DATETIME,
    settled        INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX storage_intervals_one_open ON storage_intervals(volume) WHERE ended_at IS NULL;

-- +goose Down
DROP TABLE storage_intervals;
