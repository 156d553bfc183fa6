import { inSlices, type SliceClock, type SliceResult } from '../../lib/store/slices';

/**
 * A table of `rows` rows deleted `size` at a time on a test clock: slice n takes `took[n]` ms
 * (the last entry for every slice after), and every rest the purge asks for is recorded and
 * passes on the clock. Slice n leaves `invisible[n]` of the rows it picked undeleted, as rows
 * updated after its statement began are.
 */
function table(rows: number, took: number[], invisible: number[] = []) {
	let left = rows;
	let now = 0;
	const slices: number[] = [];
	const rests: number[] = [];
	const clock: SliceClock = {
		now: () => now,
		sleep: async (ms) => {
			rests.push(ms);
			now += ms;
		},
	};
	const deleteSlice = async (size: number): Promise<SliceResult> => {
		now += took[Math.min(slices.length, took.length - 1)];
		const picked = Math.min(size, left);
		const deleted = picked - Math.min(picked, invisible[slices.length] ?? 0);
		left -= deleted;
		slices.push(deleted);
		return { picked, deleted };
	};
	return { slices, rests, clock, deleteSlice, left: () => left };
}

describe('purging in slices', () => {
	it('rests after each full slice as long as that slice took, and not after the last', async () => {
		const t = table(25, [20, 70, 5]);
		expect(await inSlices({ size: 10, rest: 1 }, t.deleteSlice, t.clock)).toBe(25);

		expect(t.slices).toEqual([10, 10, 5]);
		expect(t.left()).toBe(0);
		// Each rest is its own slice's time, not the purge's so far.
		expect(t.rests).toEqual([20, 70]);
	});

	it('a slice that picked a full slice but deleted fewer does not end the purge', async () => {
		// The second slice picked 10, but 3 of them were updated meanwhile and not deleted.
		const t = table(25, [10], [0, 3]);
		expect(await inSlices({ size: 10, rest: 1 }, t.deleteSlice, t.clock)).toBe(25);

		expect(t.slices).toEqual([10, 7, 8]);
		expect(t.left()).toBe(0);
	});

	it("hands each ordered slice's end to the next slice as its start", async () => {
		const starts: Array<string | null> = [];
		let left = 25;
		const deleteSlice = async (size: number, after: string | null): Promise<SliceResult> => {
			starts.push(after);
			const picked = Math.min(size, left);
			left -= picked;
			return { picked, deleted: picked, next: picked > 0 ? `t${25 - left}` : null };
		};
		expect(await inSlices({ size: 10, rest: 0 }, deleteSlice)).toBe(25);
		expect(starts).toEqual([null, 't10', 't20']);
	});

	it('a full slice that deleted nothing ends the purge (rows it can lock but not delete)', async () => {
		// Every row is picked and none deleted, as under a trigger that skips deletes.
		const t = table(30, [10], [10, 10, 10]);
		expect(await inSlices({ size: 10, rest: 0 }, t.deleteSlice, t.clock)).toBe(0);
		expect(t.slices).toEqual([0]);
		expect(t.left()).toBe(30);
	});

	it('scales the rest, and a rest of 0 never waits', async () => {
		const scaled = table(20, [40]);
		await inSlices({ size: 10, rest: 2.5 }, scaled.deleteSlice, scaled.clock);
		expect(scaled.rests).toEqual([100, 100]);

		const flat = table(30, [40]);
		expect(await inSlices({ size: 10, rest: 0 }, flat.deleteSlice, flat.clock)).toBe(30);
		expect(flat.rests).toEqual([]);
	});

	it('a cancelled purge stops before its next slice and says what it deleted', async () => {
		const t = table(100, [5]);
		const cancel = new AbortController();
		const deleted = await inSlices(
			{ size: 10, rest: 1, signal: cancel.signal },
			async (size) => {
				const n = await t.deleteSlice(size);
				if (t.slices.length === 2) cancel.abort();
				return n;
			},
			t.clock,
		);

		expect(deleted).toBe(20);
		expect(t.slices).toEqual([10, 10]);
		expect(t.left()).toBe(80);
	});

	it('a cancel during a rest ends the rest at once (the real clock)', async () => {
		let slices = 0;
		const cancel = new AbortController();
		const began = Date.now();
		// The first slice takes 50 ms: a rest of 200 times that is 10 s, unless the cancel ends it.
		const purge = inSlices({ size: 10, rest: 200, signal: cancel.signal }, async (size) => {
			slices++;
			await new Promise((resolve) => setTimeout(resolve, 50));
			return { picked: size, deleted: size };
		});
		setTimeout(() => cancel.abort(), 200);

		expect(await purge).toBe(10);
		expect(slices).toBe(1);
		expect(Date.now() - began).toBeLessThan(5_000);
	});
});
