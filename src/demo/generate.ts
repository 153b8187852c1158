/**
 * Deterministic text for the `generate` demo tool: the same seed always yields the same words, so
 * anyone can check a stream of partial output against the final result (or regenerate it).
 */

const WORDS = [
  'sluice',
  'stream',
  'delta',
  'token',
  'river',
  'gate',
  'flow',
  'event',
  'frame',
  'buffer',
  'socket',
  'drain',
  'resume',
  'cursor',
  'merge',
  'order',
  'text',
  'water',
  'channel',
  'signal',
  'quiet',
  'steady',
  'rapid',
  'narrow',
  'open',
  'closed',
  'late',
  'early',
  'bright',
  'cold',
  'über',
  'naïve',
  'café',
  '→',
  '"quoted"',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  '日本語',
  '🚰',
];

/** mulberry32: a tiny seeded PRNG (32-bit state), plenty for demo text. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The words of `generate` as deltas: each is a word followed by a space (or a period and newline). */
export function* generateDeltas(words: number, seed: number): Generator<string> {
  const next = prng(seed);
  for (let i = 0; i < words; i++) {
    const w = WORDS[Math.floor(next() * WORDS.length)] ?? 'sluice';
    const end = i === words - 1 || next() < 0.08 ? '.\n' : ' ';
    yield w + end;
  }
}

/** The whole text `generate` produces for these arguments. */
export function generateText(words: number, seed: number): string {
  let out = '';
  for (const d of generateDeltas(words, seed)) out += d;
  return out;
}
