-- +goose Up
-- The newest audit row of one action on one target: whether an
-- administrator already has a workbench.view_as_admin row on a workbench in
-- the last 10 minutes (checked at each view of its page, which reloads
-- every 5 s), and the "Viewed by administrator …" line on the owner's page.
-- Without it both scan the whole log, which grows with every sign-in.
CREATE INDEX audit_log_target_action ON audit_log(target, action, id);

-- +goose Down
DROP INDEX audit_log_target_action;
