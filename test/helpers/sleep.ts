/** Waits in real time: for a lease, a timeout or a cool-down to pass, or to order two runs. */
export const sleep = (ms: number): Promise<void> =>
	new Promise((resolve) => setTimeout(resolve, ms));
