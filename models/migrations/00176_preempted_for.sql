-- +goose Up
-- What the launch a preempted workbench yielded to asked for, kept after
-- the stop (preempt_for is the notice's and is cleared with it): the
-- not-running page says it from here instead of reading it back out of
-- the reason's words. Set by the move to preempted, so it is always the
-- last preemption's; read only while the workbench is preempted.
ALTER TABLE workbenches ADD COLUMN preempted_for TEXT NOT NULL DEFAULT '';

-- Workbenches preempted before this column: their reason was written by
-- the preemption itself (orchestrator preemptReason, the only writer of a
-- preempted workbench's reason), "preempted: a higher-priority launch
-- needed its GPUs (<what>; its home is kept; …)"; <what> is taken out of
-- it once, here, so the code reads only the column. Prefix 53 and both
-- endings 49 characters, all ASCII (substr and length count characters:
-- <what> may hold "×").
UPDATE workbenches SET preempted_for = substr(reason, 54, length(reason) - 53 - 49)
WHERE state = 'preempted' AND length(reason) > 53 + 49
  AND substr(reason, 1, 53) = 'preempted: a higher-priority launch needed its GPUs ('
  AND substr(reason, -49) IN ('; its home is kept; it resumes when GPUs free up)',
                              '; its home is kept; start it again when you like)');

-- +goose Down
ALTER TABLE workbenches DROP COLUMN preempted_for;
