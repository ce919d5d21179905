-- +goose Up
-- A workbench's recent administrator views, newest first, within a window
-- (its owner's page and API: the last few in 90 days and how many more):
-- a range of one target's rows of one action from a time on, already in
-- time order (the rowid, its id, breaks ties). audit_log_target_action is
-- in id order and holds no time: the count of looks in the window read
-- every row the workbench was ever viewed in, and the list sorted them.
CREATE INDEX audit_log_target_action_at ON audit_log(target, action, at);

-- +goose Down
DROP INDEX audit_log_target_action_at;
