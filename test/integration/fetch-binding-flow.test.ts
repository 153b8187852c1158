// The server integration suites on cancellation, disconnects, backpressure (coalescing under a paused reader, overflow then resume), resume trials, close() races, server-to-client requests and shutdown/restart, run unchanged against createFetchHandler under
// Node (see test/helpers/fetch-suites.ts).
import { fetchSuites } from '../helpers/fetch-suites.js';

fetchSuites([
  'server-flow',
  'resume-trials',
  'close-races',
  'resume-end-races',
  'stateless-mode',
  'server-request-timeout',
  'shutdown-restart',
]);
