// The server integration suites on hostile input (malformed bodies and headers, floods of refused
// requests, generated hostile requests), run unchanged against createFetchHandler under
// Node (see test/helpers/fetch-suites.ts).
import { fetchSuites } from '../helpers/fetch-suites.js';

fetchSuites(['hostile-input', 'endpoint-fuzz']);
