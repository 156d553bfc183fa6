-- One item, one open letter: an item's own letter (an event's) is one per item whatever step it
-- failed at (a stop at one node, then a failure at another, of the same event). Open duplicates
-- that earlier versions made are merged into one, each closed with a line that says so. The one
-- kept is the one a person or a run acts on (being fixed, then asked to be replayed, then held),
-- else the newest.
WITH ranked AS (
	SELECT id, status, first_value(id) OVER w AS keeper, row_number() OVER w AS rank
	FROM :SCHEMA.dead_letters
	WHERE is_open AND item_key LIKE 'key:event:%'
	WINDOW w AS (
		PARTITION BY workflow_id, item_key
		ORDER BY CASE status WHEN 'being_fixed' THEN 0 WHEN 'replay_requested' THEN 1 WHEN 'held' THEN 2 ELSE 3 END,
		         last_failed_at DESC, id DESC)
), closed AS (
	UPDATE :SCHEMA.dead_letters d
	SET status = 'resolved', closed_at = now(), updated_at = now(), generation = d.generation + 1, taken_by = NULL
	FROM ranked r WHERE d.id = r.id AND r.rank > 1
	RETURNING d.id, r.status AS from_status, r.keeper
)
INSERT INTO :SCHEMA.dead_letter_events (dead_letter_id, actor, from_status, to_status, reason)
SELECT id, 'upgrade', from_status, 'resolved', 'merged into dead letter ' || keeper || ', the open letter of the same item'
FROM closed;

-- The open identity the park statement names. The per-step index stays beside it while a fleet
-- upgrades: a worker still on the earlier version names that one in its park.
CREATE UNIQUE INDEX dead_letters_open_identity ON :SCHEMA.dead_letters
	(workflow_id, (CASE WHEN item_key LIKE 'key:event:%' THEN ''::text ELSE step END), item_key) WHERE is_open;
