-- +goose Up
-- Prices, metering, the billing ledger and quotas (SPEC §6).

-- Versioned rates: a row applies from effective_from until a newer row of the
-- same resource (and GPU model) takes over. Rows are never changed.
CREATE TABLE price_rates (
    id             INTEGER PRIMARY KEY,
    resource       TEXT NOT NULL CHECK (resource IN ('gpu', 'cpu', 'memory', 'storage')),
    gpu_model      TEXT NOT NULL DEFAULT '',
    micros         INTEGER NOT NULL CHECK (micros >= 0),
    effective_from DATETIME NOT NULL,
    is_default     INTEGER NOT NULL DEFAULT 0,
    created_by     TEXT NOT NULL,
    created_at     DATETIME NOT NULL
);
CREATE INDEX price_rates_lookup ON price_rates(resource, gpu_model, effective_from);

-- A span of time during which a workbench held resources: the source of
-- every compute charge. heartbeat_at is moved forward while it is open, so a
-- crash loses at most one heartbeat interval.
CREATE TABLE usage_intervals (
    id             INTEGER PRIMARY KEY,
    workbench_id   TEXT NOT NULL REFERENCES workbenches(id),
    user_id        INTEGER NOT NULL REFERENCES users(id),
    gpu_model      TEXT NOT NULL DEFAULT '',
    gpu_count      INTEGER NOT NULL DEFAULT 0,
    cpu_milli      INTEGER NOT NULL,
    memory_gib     INTEGER NOT NULL,
    started_at     DATETIME NOT NULL,
    heartbeat_at   DATETIME NOT NULL,
    ended_at       DATETIME,
    end_reason     TEXT NOT NULL DEFAULT '',
    billed_through DATETIME,
    settled        INTEGER NOT NULL DEFAULT 0 -- 1 once the closed interval is fully in the ledger
);
CREATE UNIQUE INDEX usage_intervals_one_open ON usage_intervals(workbench_id) WHERE ended_at IS NULL;
CREATE INDEX usage_intervals_user ON usage_intervals(user_id, started_at);

-- The ledger: priced lines, append-only. The idempotency key (interval,
-- resource, period start) makes replaying a pricing run add nothing; a
-- correction is a new line that reverses another.
CREATE TABLE ledger_entries (
    id              INTEGER PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    user_id         INTEGER NOT NULL REFERENCES users(id),
    group_name      TEXT NOT NULL DEFAULT '',
    workbench_id    TEXT NOT NULL DEFAULT '',
    interval_id     INTEGER REFERENCES usage_intervals(id),
    resource        TEXT NOT NULL,
    gpu_model       TEXT NOT NULL DEFAULT '',
    period_start    DATETIME NOT NULL,
    period_end      DATETIME NOT NULL,
    seconds         INTEGER NOT NULL,
    quantity_milli  INTEGER NOT NULL,
    rate_micros     INTEGER NOT NULL,
    amount_micros   INTEGER NOT NULL,
    reverses        INTEGER REFERENCES ledger_entries(id),
    note            TEXT NOT NULL DEFAULT '',
    created_at      DATETIME NOT NULL
);
CREATE INDEX ledger_user_period ON ledger_entries(user_id, period_start);
CREATE INDEX ledger_period ON ledger_entries(period_start);
-- +goose StatementBegin
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN
    SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
BEGIN
    SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
-- +goose StatementEnd

-- Quotas: one row for the global default, one per user or group that
-- overrides it. NULL means unlimited (or, for lists, everything allowed).
CREATE TABLE quotas (
    id                      INTEGER PRIMARY KEY,
    scope                   TEXT NOT NULL CHECK (scope IN ('default', 'user', 'group')),
    subject_id              INTEGER NOT NULL DEFAULT 0,
    max_gpus                INTEGER,
    max_gpus_per_model      TEXT,
    max_workbenches         INTEGER,
    gpu_hours_per_month     INTEGER,
    budget_per_month_micros INTEGER,
    max_runtime_hours       INTEGER,
    allowed_images          TEXT,
    allowed_flavors         TEXT,
    updated_by              TEXT NOT NULL DEFAULT '',
    updated_at              DATETIME NOT NULL,
    UNIQUE (scope, subject_id)
);

-- +goose Down
DROP TABLE quotas;
DROP TRIGGER ledger_entries_no_delete;
DROP TRIGGER ledger_entries_no_update;
DROP TABLE ledger_entries;
DROP TABLE usage_intervals;
DROP TABLE price_rates;
