-- Every failed inbox claim is accounted for, whatever error workflow the user named. A failed
-- claim keeps its item until something holds it: `settled_as` says what does. NULL: nothing yet
-- (Recover's sweep parks it, past a short grace, unless a calling execution's item holds it);
-- `parked`: a dead letter of the item; `covered`: the letter (or the live claim) of the execution
-- that called this one as a sub-workflow; `dropped`: a named rule (Release, a run from the editor).
-- A failed claim nothing holds is never purged: it is the only copy of its item.
ALTER TABLE :SCHEMA.processed_events
	ADD COLUMN settled_as text CHECK (settled_as IN ('parked', 'covered', 'dropped')),
	-- The step the claim's execution failed or was stopped at, for the letter the sweep parks.
	ADD COLUMN failed_step text,
	-- The executions that called the claiming one as a sub-workflow, nearest first: while one of
	-- them holds an item of its own, that item's letter (or its recovery) is this one's too.
	ADD COLUMN ancestors text[] NOT NULL DEFAULT '{}',
	-- The claim's execution waits (a Wait that n8n offloads) until this time and resumes in a new
	-- process with new hooks: once its hold lapses, Recover asks n8n how the execution ended.
	ADD COLUMN waiting_till timestamptz,
	-- What a resumed execution that n8n no longer has means (it deleted the record, as the
	-- workflow's save settings say): `done` (it saves no success but every error) or `check`.
	ADD COLUMN if_gone text CHECK (if_gone IN ('done', 'check')),
	-- The longest its run may take after the wait (the workflow's timeout, when it sets one): a
	-- record that still shows the wait this long after it ended is of a run n8n lost (it marked
	-- it crashed without saving it), and Recover runs the item again.
	ADD COLUMN run_limit_seconds integer,
	-- When Recover next asks n8n about the waiting execution: at the wait's end, and at most ten
	-- minutes apart meanwhile (a person may stop or delete a waiting execution, which no hook
	-- reports). The claim's lease itself runs to the wait's end, as it always did.
	ADD COLUMN ask_at timestamptz;

-- Failed claims earlier versions left: those a dead letter of the item (parked since the claim)
-- holds are parked; those
-- released (Release by Event ID) are dropped by that rule. The rest held nothing: Recover parks
-- them (a named error workflow that parked nothing lost them).
UPDATE :SCHEMA.processed_events p SET settled_as = 'parked'
WHERE p.status = 'failed' AND (p.payload IS NOT NULL OR p.payload_bytes IS NOT NULL)
  AND EXISTS (SELECT 1 FROM :SCHEMA.dead_letters d
              WHERE d.last_failed_at >= p.claimed_at
                AND d.idempotency_key IN ('event:' || p.consumer || ':' || p.event_id,
                  'event:sha256:' || encode(sha256(convert_to('event:' || p.consumer || ':' || p.event_id, 'UTF8')), 'hex')));
UPDATE :SCHEMA.processed_events SET settled_as = 'dropped'
WHERE status = 'failed' AND settled_as IS NULL AND last_error LIKE 'released by execution %';

-- Recover finds the waiting executions to ask n8n about without a scan.
CREATE INDEX processed_events_waiting ON :SCHEMA.processed_events (ask_at)
	WHERE status = 'in_progress' AND waiting_till IS NOT NULL;

-- Recover's sweep finds failed claims that nothing holds yet without a scan.
CREATE INDEX processed_events_unsettled ON :SCHEMA.processed_events (lease_until)
	WHERE status = 'failed' AND settled_as IS NULL AND (payload IS NOT NULL OR payload_bytes IS NOT NULL);

-- When an execution's one item is parked, the letters its write steps parked are folded into the
-- item's letter (one item, one letter): found by their execution among the open letters.
CREATE INDEX dead_letters_open_by_execution ON :SCHEMA.dead_letters (execution_id) WHERE is_open;
