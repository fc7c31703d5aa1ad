/**
 * One refresh at a time for a view: bursts of triggers (saves, file events, server
 * notifications) collapse into one load after a quiet delay, and a refresh asked for while
 * one runs is done once more after it, never twice at the same time.
 */
export class CoalescedRefresh {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> | undefined;
  private again = false;

  constructor(private readonly load: () => Promise<void>) {}

  /** Loads after `delayMs` without a further call. */
  schedule(delayMs: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, delayMs);
  }

  /** Loads now, or once more after the load in progress (resolves with that load). */
  run(): Promise<void> {
    if (this.inFlight !== undefined) {
      this.again = true;
      return this.inFlight;
    }
    this.inFlight = this.load().finally(() => {
      this.inFlight = undefined;
      if (this.again) {
        this.again = false;
        void this.run();
      }
    });
    return this.inFlight;
  }

  /** Drops a scheduled load. */
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
