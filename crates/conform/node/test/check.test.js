// bloomlab-conform's own behaviour (not an author's test): what check() refuses before running
// bloomlab, and what a broken result looks like. Every test passes.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { check, findBloomlab, BloomlabError } = require('bloomlab-conform');

const exact = require.resolve('./exact-set');
const lossy = require.resolve('./lossy-set');

test('bad options are refused naming the value', async () => {
  const cases = [
    [{ plan: 'fast' }, /plan = fast is invalid: it must be one of quick, full/],
    [{ n: 0 }, /n = 0 is invalid: it must be in 1..=2\^40/],
    [{ p: NaN }, /p = NaN is invalid: it must be in \(0, 1\)/],
    [{ clauses: ['sped'] }, /clause sped is unknown/],
    [{ supports: { n: [0, 5] } }, /supports.n = \[0,5\] is invalid/],
    [{ export: 'Nothing' }, /exports no Nothing/],
  ];
  for (const [options, message] of cases) await assert.rejects(check(exact, options), message);
});

test('a missing bloomlab is named', () => {
  const saved = process.env.BLOOMLAB;
  process.env.BLOOMLAB = '/nonexistent/bloomlab';
  try {
    assert.throws(findBloomlab, (e) => e instanceof BloomlabError && /\/nonexistent\/bloomlab/.test(e.message));
  } finally {
    if (saved === undefined) delete process.env.BLOOMLAB;
    else process.env.BLOOMLAB = saved;
  }
});

test('a broken clause is a result with its evidence', async () => {
  const result = await check(lossy, { clauses: ['no-false-negatives'], hunt: false });
  assert.strictEqual(result.conforms, false);
  assert.strictEqual(result.exitStatus, 1);
  const verdict = result.verdict('no-false-negatives');
  assert.strictEqual(verdict.outcome, 'broken');
  assert.match(verdict.figure, /missed/);
  assert.match(verdict.reproduce, /--adapter/);
  assert.throws(() => result.assertConforms(), (e) => e instanceof assert.AssertionError &&
    e.message.includes('broken: no-false-negatives') && e.message.includes(verdict.figure));
});

test('the exact set holds the clause the lossy set breaks', async () => {
  const result = await check(exact, { clauses: ['no-false-negatives'], hunt: false });
  assert.strictEqual(result.verdict('no-false-negatives').outcome, 'holds');
  result.assertConforms();
});

test('growable and the supported range reach bloomlab', async () => {
  const result = await check(require.resolve('./growing-set'), { export: 'GrowingSet', clauses: ['over-fill'], hunt: false });
  const subject = result.conformances[0].raw.subject;
  assert.strictEqual(subject.capabilities.growable, true);
  assert.deepStrictEqual(subject.supports, { n: [1, 1e8], p: [1e-6, 0.5] });
  // A growable filter is filled to 64 times its n and held to its p.
  const overFill = result.verdict('over-fill');
  assert.strictEqual(overFill.outcome, 'holds');
  assert.match(overFill.figure, /64x/);
});

test('the optional methods are used and a lossy round trip is caught', async () => {
  const module = require.resolve('./serializable-set');
  const one = { clauses: ['no-false-negatives'], hunt: false };
  const kept = await check(module, { ...one, export: 'SerializableSet' });
  const caps = kept.conformances[0].raw.subject.capabilities;
  assert.strictEqual(caps.serialize, true);
  assert.strictEqual(caps.stats, true);
  assert.ok(kept.verdict('no-false-negatives').evidence.some((e) => e.includes('after round trip')));
  kept.assertConforms();
  const lost = await check(module, { ...one, export: 'ForgetfulSerializer' });
  const verdict = lost.verdict('no-false-negatives');
  assert.strictEqual(verdict.outcome, 'broken');
  assert.ok(verdict.evidence.some((e) => e.includes('long (after round trip)') && !e.includes(' 0 of ')), verdict.evidence.join('\n'));
});
