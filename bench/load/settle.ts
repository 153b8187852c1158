// When an idle server counts as settled (section (c)'s settled reading, bench/load/idle.ts): for a
// few looks in a row V8's young generation is at its floor (a GC found the allocation rate low and
// gave back what a burst grew) and the figure the reading reports, RSS less the young generation,
// holds still. Every look of the run must be at the floor: a server that writes a keepalive
// comment to every open stream (Sluice, every 15 s) grows its young generation by a few MB in a
// round at 5,000 streams, and a young generation that large is committed memory RSS may not all
// hold, so subtracting it is not exact; such a look starts the count again. Pure: fed one look at
// a time, so it is tested without a server.

export interface SettleRule {
  /** Young generation (physical bytes) at or under which it counts as at its floor. */
  youngFloorBytes: number;
  /** RSS less the young generation must move by less than this over `stillLooks` looks in a row at the floor. */
  stillBytes: number;
  stillLooks: number;
}

export class SettleWatch {
  readonly #rule: SettleRule;
  readonly #recent: number[] = [];

  constructor(rule: SettleRule) {
    if (
      !Number.isInteger(rule.stillLooks) ||
      rule.stillLooks < 1 ||
      !(rule.stillBytes > 0) ||
      !(rule.youngFloorBytes > 0)
    )
      throw new RangeError('SettleWatch: stillLooks a whole number ≥ 1, stillBytes and youngFloorBytes > 0');
    this.#rule = rule;
  }

  /** One look (young generation and RSS, bytes); true once the server counts as settled. */
  look(youngBytes: number, rssBytes: number): boolean {
    const r = this.#recent;
    // Above the floor the young generation holds what a burst grew: the run starts again.
    if (!(youngBytes <= this.#rule.youngFloorBytes)) {
      r.length = 0;
      return false;
    }
    r.push(rssBytes - youngBytes);
    if (r.length > this.#rule.stillLooks) r.shift();
    return r.length === this.#rule.stillLooks && Math.max(...r) - Math.min(...r) < this.#rule.stillBytes;
  }
}
