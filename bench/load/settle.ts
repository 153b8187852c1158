// When an idle server counts as settled (section (c)'s settled reading, bench/load/idle.ts): V8's
// young generation has been seen at its floor — the memory reducer has run — and the figure the
// reading reports, RSS less the young generation, has then held still for a few looks in a row.
// Not RSS itself: a server that writes a keepalive comment to every open stream (Sluice, every
// 15 s) grows its young generation by a few MB each round at 5,000 streams, which RSS shows until
// the next GC, while what the streams hold stays where it was. Pure: fed one look at a time, so
// it is tested without a server.

export interface SettleRule {
  /** Young generation (physical bytes) at or under which it counts as at its floor. */
  youngFloorBytes: number;
  /** RSS less the young generation must move by less than this over `stillLooks` looks in a row, after the floor was seen. */
  stillBytes: number;
  stillLooks: number;
}

export class SettleWatch {
  readonly #rule: SettleRule;
  readonly #recent: number[] = [];
  #floorSeen = false;

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
    if (!this.#floorSeen && youngBytes <= this.#rule.youngFloorBytes) this.#floorSeen = true;
    // Looks before the floor say nothing: the reducer has not run yet.
    if (!this.#floorSeen) return false;
    const r = this.#recent;
    r.push(rssBytes - youngBytes);
    if (r.length > this.#rule.stillLooks) r.shift();
    return r.length === this.#rule.stillLooks && Math.max(...r) - Math.min(...r) < this.#rule.stillBytes;
  }
}
