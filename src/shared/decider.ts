/** A pure aggregate: no I/O; the clock and ids arrive in the command (as in Emmett's `Decider`). */
export interface Decider<State, Command, Event> {
  decide(command: Command, state: State): Event[]
  evolve(state: State, event: Event): State
  initialState(): State
}

/** An event as deciders see it: the payload without storage metadata. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type
  data: Data
}
