-- +goose Up
-- A monthly rollup of the ledger, kept by a trigger in the same transaction
-- as every insert. The ledger is append-only, so the rollup is exact; the
-- admin overview of a month reads a few thousand rollup rows instead of
-- every ledger line (1,000,000 lines: 3.4 s → milliseconds).
CREATE TABLE ledger_monthly (
    month         TEXT NOT NULL, -- 'YYYY-MM' of period_start (UTC)
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

-- +goose Down
DROP TRIGGER ledger_entries_rollup;
DROP TABLE ledger_monthly;
