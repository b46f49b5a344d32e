import { useEffect, useState } from 'preact/hooks';

/** A value screens can watch: `set` notifies every subscriber. */
export class Observable<T> {
  private readonly subscribers = new Set<(v: T) => void>();
  constructor(private current: T) {}

  get value(): T {
    return this.current;
  }

  set(v: T): void {
    this.current = v;
    for (const s of this.subscribers) s(v);
  }

  subscribe(fn: (v: T) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }
}

/** Re-renders the component whenever the observable changes. */
export function useObservable<T>(o: Observable<T>): T {
  const [, setTick] = useState(0);
  useEffect(() => o.subscribe(() => setTick((t) => t + 1)), [o]);
  return o.value;
}
