/** `node --import` this file to log every module the process loads (module-log-hooks.ts). */
import { register } from 'node:module';

register('./module-log-hooks.js', import.meta.url);
