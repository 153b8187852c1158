// The server integration suites on POST/GET/DELETE, streaming, sessions, security, limits and operations, run unchanged against createFetchHandler under
// Node (see test/helpers/fetch-suites.ts).
import { fetchSuites } from '../helpers/fetch-suites.js';

fetchSuites([
  'server-post',
  'server-stream',
  'server-session',
  'server-security',
  'server-limits',
  'server-ops',
]);
