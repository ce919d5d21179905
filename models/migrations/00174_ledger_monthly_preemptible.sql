-- +goose Up
-- The billing pages (the admin's overview, a group's statement) say which
-- part of each row was billed at the preemptible tier. Whole months are read
-- from the ledger_monthly rollup, so it keeps that part too: a line's tier
-- is its usage interval's (LineTierSQL in models/ledger.go), and only the
-- GPU units of a run are discounted (its CPU and memory lines, and lines of
-- no interval, are standard). An interval's tier is set when it opens,
-- before any line bills it, so the trigger reads it once per line.
ALTER TABLE ledger_monthly ADD COLUMN preemptible_micros INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER ledger_entries_rollup;
-- +goose StatementBegin
CREATE TRIGGER ledger_entries_rollup AFTER INSERT ON ledger_entries
BEGIN
    INSERT INTO ledger_monthly (month, user_id, group_id, group_name, gpu_model, resource, workbench_id, gpu_seconds, amount_micros, lines, preemptible_micros)
    VALUES (substr(NEW.period_start, 1, 7), NEW.user_id, COALESCE(NEW.group_id, 0), NEW.group_name, NEW.gpu_model, NEW.resource, NEW.workbench_id,
            CASE WHEN NEW.resource = 'gpu' THEN NEW.seconds * NEW.quantity_milli / 1000 ELSE 0 END, NEW.amount_micros, 1,
            CASE WHEN NEW.resource IN ('gpu', 'mig', 'slice')
                  AND (SELECT iv.tier FROM usage_intervals iv WHERE iv.id = NEW.interval_id) = 'preemptible'
                 THEN NEW.amount_micros ELSE 0 END)
    ON CONFLICT (month, user_id, group_id, group_name, gpu_model, resource, workbench_id) DO UPDATE SET
        gpu_seconds = gpu_seconds + excluded.gpu_seconds,
        amount_micros = amount_micros + excluded.amount_micros,
        lines = lines + 1,
        preemptible_micros = preemptible_micros + excluded.preemptible_micros;
END;
-- +goose StatementEnd

-- The lines written before: the rollup is rebuilt from the ledger in one
-- pass, as migration 149 did (its other columns come out the same).
DELETE FROM ledger_monthly;
INSERT INTO ledger_monthly (month, user_id, group_id, group_name, gpu_model, resource, workbench_id, gpu_seconds, amount_micros, lines, preemptible_micros)
SELECT substr(l.period_start, 1, 7), l.user_id, COALESCE(l.group_id, 0), l.group_name, l.gpu_model, l.resource, l.workbench_id,
       SUM(CASE WHEN l.resource = 'gpu' THEN l.seconds * l.quantity_milli / 1000 ELSE 0 END), SUM(l.amount_micros), COUNT(*),
       SUM(CASE WHEN l.resource IN ('gpu', 'mig', 'slice') AND iv.tier = 'preemptible' THEN l.amount_micros ELSE 0 END)
FROM ledger_entries l LEFT JOIN usage_intervals iv ON iv.id = l.interval_id
GROUP BY 1, 2, 3, 4, 5, 6, 7;

-- +goose Down
DROP TRIGGER ledger_entries_rollup;
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
ALTER TABLE ledger_monthly DROP COLUMN preemptible_micros;
