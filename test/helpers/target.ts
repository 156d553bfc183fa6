import { TestTarget } from '../../dev/target/server';

/**
 * The test file's HTTP target: a new TestTarget, started before the file's tests and stopped
 * after them. Called at the top of the file, where jest takes its hooks.
 */
export function fileTarget(): TestTarget {
	const target = new TestTarget();
	beforeAll(() => target.start());
	afterAll(() => target.stop());
	return target;
}
