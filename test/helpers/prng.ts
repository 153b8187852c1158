/**
 * The seeded PRNG the trials use, so a failing trial can be replayed from its printed seed. The same
 * mulberry32 the demo's `generate` tool draws its text from (one implementation).
 */
export { prng } from '../../src/demo/generate.js';
