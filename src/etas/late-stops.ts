/** How many of a route's stops are late now (issue 37): those whose current ETA says so. */
export const lateStops = (tasks: readonly { eta: { late: boolean } | null }[]): number => tasks.reduce((n, t) => n + (t.eta?.late ? 1 : 0), 0)
