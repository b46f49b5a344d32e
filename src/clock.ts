/** Time source, injected so tests can move time (the 24-hour window, leases, retries). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private t: number = Date.parse('2026-01-01T00:00:00Z')) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(t: number): void {
    this.t = t;
  }
}

export const iso = (clock: Clock) => new Date(clock.now()).toISOString();
