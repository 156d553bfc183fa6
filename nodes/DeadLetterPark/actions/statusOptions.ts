/** The statuses a person can pick, in the editor's alphabetical order. */
export const statusOptions = [
	{ name: 'Abandoned', value: 'abandoned' },
	{ name: 'Being Fixed', value: 'being_fixed' },
	{ name: 'Compensated', value: 'compensated' },
	{ name: 'Held', value: 'held' },
	{ name: 'New', value: 'new' },
	{ name: 'Replay Requested', value: 'replay_requested' },
	{ name: 'Replayed', value: 'replayed' },
	{ name: 'Resolved', value: 'resolved' },
];
