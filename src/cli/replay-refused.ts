/** A replay the operator asked for that cannot run as asked (printed as is, exit code 2). */
export class ReplayRefused extends Error {}
