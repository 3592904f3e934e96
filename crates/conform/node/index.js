// bloomlab-conform: hold a Node filter to bloomlab's conformance suite from its own tests.
//
//   const { check } = require('bloomlab-conform');
//   test('my filter conforms', async () => (await check(require.resolve('./my-filter'))).assertConforms());
//
// check() runs the `bloomlab` command (from `pip install bloomlab`) on the module's filter, built
// in a child process; serve() is the protocol itself, for an adapter script of your own.
'use strict';

const { serve, keyList, encodeKeyList, PROTOCOL } = require('./lib/protocol');
const { check, findBloomlab, BloomlabError, Result, PLANS, CLAUSES } = require('./lib/check');

module.exports = { check, serve, findBloomlab, BloomlabError, Result, keyList, encodeKeyList, PROTOCOL, PLANS, CLAUSES };
