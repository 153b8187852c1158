// Preloaded (NODE_OPTIONS=--require) into the official conformance suite's client runs and what they start:
// a DNS lookup of a name that is not loopback fails at once, as ENOTFOUND, instead of sending a query to the
// machine's resolver. The suite's mock authorization server looks up the client's metadata URL
// (https://conformance-test.local/…, the client id the suite expects), a name that resolves nowhere: the
// lookup failed anyway, but its query left the machine, and tests reach only loopback. An IP address
// needs no lookup and is left to the connection itself.
'use strict';
const dns = require('node:dns');
const { isIP } = require('node:net');

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.', 'ip6-localhost']);
const lookup = dns.lookup;

dns.lookup = function loopbackOnly(host, options, callback) {
  if (typeof host === 'string' && isIP(host) === 0 && !LOOPBACK_NAMES.has(host.toLowerCase())) {
    const done = typeof options === 'function' ? options : callback;
    const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${host} (the tests reach loopback only)`), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      hostname: host,
    });
    process.nextTick(done, error);
    return {};
  }
  // biome-ignore lint/complexity/noArguments: passed on exactly as given (dns.lookup has three call shapes).
  return lookup.apply(this, arguments);
};
