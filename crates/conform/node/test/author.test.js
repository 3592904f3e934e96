// A filter author's conformance tests, as they would write them. CI (scripts/check-packages.sh)
// runs this file with `node --test` in a fresh folder where only the packed npm package is
// installed and `bloomlab` comes from the wheel, and expects exactly: the exact set passes, the
// lossy set fails, the failure showing the broken clause with its evidence.
'use strict';

const test = require('node:test');
const { check } = require('bloomlab-conform');

test('the exact set conforms', async () => {
  (await check(require.resolve('./exact-set'), { plan: 'quick' })).assertConforms();
});

test('the lossy set conforms', async () => {
  (await check(require.resolve('./lossy-set'), { plan: 'quick' })).assertConforms();
});
