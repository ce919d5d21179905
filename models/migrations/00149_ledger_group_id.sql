-- +goose Up
-- Ledger lines name the group they were billed to by id as well as by
-- name. A renamed group's month was two groups in the by-group views (its
-- lines split between the old and the new name), and its lead's statement
-- lost the lines before the rename. The name stays on each line: it is
-- what the line said when it was written. NULL: no group (or a line whose
-- group had been renamed or deleted before this column existed).
ALTER TABLE ledger_entries ADD COLUMN group_id INTEGER;

-- The lines written before: the group that has their name now. The
-- append-only trigger is set aside for this one backfill.
DROP TRIGGER ledger_entries_no_update;
UPDATE ledger_entries SET group_id = (SELECT g.id FROM groups g WHERE g.name = ledger_entries.group_name)
WHERE group_name != '';
-- +goose StatementBegin
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN
    SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
-- +goose StatementEnd

-- The monthly rollup is keyed by the group's id too (0: none), rebuilt
-- from the ledger.
DROP TRIGGER ledger_entries_rollup;
DROP INDEX ledger_monthly_user_month;
DROP TABLE ledger_monthly;
CREATE TABLE ledger_monthly (
    month         TEXT NOT NULL, -- 'YYYY-MM' of period_start (UTC)
    user_id       INTEGER NOT NULL,
    group_id      INTEGER NOT NULL,
    group_name    TEXT NOT NULL,
    gpu_model     TEXT NOT NULL,
    resource      TEXT NOT NULL,
    workbench_id  TEXT NOT NULL,
    gpu_seconds   INTEGER NOT NULL,
    amount_micros INTEGER NOT NULL,
    lines         INTEGER NOT NULL,
    PRIMARY KEY (month, user_id, group_id, group_name, gpu_model, resource, workbench_id)
);
CREATE INDEX ledger_monthly_user_month ON ledger_monthly (user_id, month);
CREATE INDEX ledger_monthly_group_month ON ledger_monthly (group_id, month);

-- +goose StatementBegin
CREATE TRIGGER ledger_entries_rollup AFTER INSERT ON ledger_entries
BEGIN
    INSERT INTO ledger_monthly (month, user_id, group_id, group_name, gpu_model, resource, workbench_id, gpu_seconds, amount_micros, lines)
    VALUES (substr(NEW.period_start, 1, 7), NEW.user_id, COALESCE(NEW.group_id, 0), NEW.group_name, NEW.gpu_model, NEW.resource, NEW.workbench_id,
            CASE WHEN NEW.resource = 'gpu' THEN NEW.seconds * NEW.quantity_milli / 1000 ELSE 0 END, NEW.amount_micros, 1)
    ON CONFLICT (month, user_id, group_id, group_name, gpu_model, resource, workbench_id) DO UPDATE SET
        gpu_seconds = gpu_seconds + excluded.gpu_seconds,
        amount_micros = amount_micros + excluded.amount_micros,
        lines = lines + 1;
END;
-- +goose StatementEnd

INSERT INTO ledger_monthly (month, user_id, group_id, group_name, gpu_model, resource, workbench_id, gpu_seconds, amount_micros, lines)
SELECT substr(period_start, 1, 7), user_id, COALESCE(group_id, 0), group_name, gpu_model, resource, workbench_id,
       SUM(CASE WHEN resource = 'gpu' THEN seconds * quantity_milli / 1000 ELSE 0 END), SUM(amount_micros), COUNT(*)
FROM ledger_entries GROUP BY 1, 2, 3, 4, 5, 6, 7;

-- Measured energy by group follows the group the same way.
ALTER TABLE interval_energy ADD COLUMN group_id INTEGER;
UPDATE interval_energy SET group_id = (SELECT g.id FROM groups g WHERE g.name = interval_energy.group_name)
WHERE group_name != '';

-- +goose Down
ALTER TABLE interval_energy DROP COLUMN group_id;
DROP TRIGGER ledger_entries_rollup;
DROP INDEX ledger_monthly_group_month;
DROP INDEX ledger_monthly_user_month;
DROP TABLE ledger_monthly;
CREATE TABLE ledger_monthly (
    month         TEXT NOT NULL,
    user_id       INTEGER NOT NULL,
    group_name    TEXT NOT NULL,
    gpu_model     TEXT NOT NULL,
    resource      TEXT NOT NULL,
    workbench_id  TEXT NOT NULL,
    gpu_seconds   INTEGER NOT NULL,
    amount_micros INTEGER NOT NULL,
    lines         INTEGER NOT NULL,
    PRIMARY KEY (month, user_id, group_name, gpu_model, resource, workbench_id)
);
CREATE INDEX ledger_monthly_user_month ON ledger_monthly (user_id, month);
-- +goose StatementBegin
CREATE TRIGGER ledger_entries_rollup AFTER INSERT ON ledger_entries
BEGIN
    INSERT INTO ledger_monthly (month, user_id, group_name, gpu_model, resource, workbench_id, gpu_seconds, amount_micros, lines)
    VALUES (substr(NEW.period_start, 1, 7), NEW.user_id, NEW.group_name, NEW.gpu_model, NEW.resource, NEW.workbench_id,
            CASE WHEN NEW.resource = 'gpu' THEN NEW.seconds * NEW.quantity_milli / 1000 ELSE 0 END, NEW.amount_micros, 1)
    ON CONFLICT (month, user_id, group_name, gpu_model, resource, workbench_id) DO UPDATE SET
        gpu_seconds = gpu_seconds + excluded.gpu_seconds,
        amount_micros = amount_micros + excluded.amount_micros,
        lines = lines + 1;
END;
-- +goose StatementEnd
INSERT INTO ledger_monthly (month, user_id, group_name, gpu_model, resource, workbench_id, gpu_seconds, amount_micros, lines)
SELECT substr(period_start, 1, 7), user_id, group_name, gpu_model, resource, workbench_id,
       SUM(CASE WHEN resource = 'gpu' THEN seconds * quantity_milli / 1000 ELSE 0 END), SUM(amount_micros), COUNT(*)
FROM ledger_entries GROUP BY 1, 2, 3, 4, 5, 6;
DROP TRIGGER ledger_entries_no_update;
ALTER TABLE ledger_entries DROP COLUMN group_id;
-- +goose StatementBegin
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN
    SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
-- +goose StatementEnd
