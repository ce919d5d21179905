-- +goose Up
-- Per-minute rollup of GPU telemetry, kept for a configurable period
-- (default 35 days) for utilisation and idle-cost reports. util_sum over
-- util_samples is the mean SM utilisation of the readable samples;
-- unread_samples counts those that could not be read (never counted as 0%).
CREATE TABLE gpu_minutes (
    gpu_uuid       TEXT    NOT NULL,
    minute         INTEGER NOT NULL, -- unix seconds of the minute's start (UTC)
    samples        INTEGER NOT NULL,
    util_samples   INTEGER NOT NULL,
    util_sum       INTEGER NOT NULL,
    unread_samples INTEGER NOT NULL,
    mem_used_max_mib INTEGER NOT NULL,
    power_samples  INTEGER NOT NULL,
    power_sum_mw   INTEGER NOT NULL,
    workbench_id   TEXT    NOT NULL DEFAULT '', -- holder at the minute's last sample
    PRIMARY KEY (gpu_uuid, minute)
);
CREATE INDEX gpu_minutes_minute ON gpu_minutes (minute);

-- +goose Down
DROP TABLE gpu_minutes;
