'use strict';

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { loadExport } = require('./load');

const PLANS = ['quick', 'full'];
const CLAUSES = ['no-false-negatives', 'promised-rate', 'theory', 'key-families', 'scale', 'over-fill', 'accepts-valid-input', 'bad-input', 'speed'];
// bloomlab's exit statuses (`bloomlab conform --help`).
const CONFORMS = 0, BROKEN = 1, BAD_INPUT = 2, INTERRUPTED = 130;
const TAIL = 30;

/** bloomlab could not check the filter: no verdict exists (a broken clause is not an error). */
class BloomlabError extends Error {
  constructor(message) {
    super(message);
    this.name = 'BloomlabError';
  }
}

/** What `bloomlab conform` found. */
class Result {
  constructor(conformances, table, exitStatus, command) {
    this.conformances = conformances;
    this.table = table;
    this.exitStatus = exitStatus;
    this.command = command;
  }

  /** Every broken verdict, of every subject. */
  get broken() {
    return this.conformances.flatMap((c) => c.verdicts.filter((v) => v.outcome === 'broken'));
  }

  /** No clause broken (undecided and n/a verdicts are not failures). */
  get conforms() {
    return this.broken.length === 0;
  }

  /** Throws an AssertionError with bloomlab's verdict table unless no clause is broken. */
  assertConforms() {
    if (!this.conforms) {
      const clauses = this.broken.map((v) => v.clause).join(', ');
      throw new assert.AssertionError({ message: `bloomlab conform: broken: ${clauses}\n${this.table}` });
    }
  }

  /** The verdict on `clause` of the first subject. */
  verdict(clause) {
    const v = this.conformances[0].verdicts.find((x) => x.clause === clause);
    if (!v) throw new Error(`clause ${clause} did not run`);
    return v;
  }
}

function executable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The `bloomlab` command: $BLOOMLAB if set, else the first on PATH (the Python wheel's). */
function findBloomlab() {
  const named = process.env.BLOOMLAB;
  if (named) {
    if (!executable(named)) throw new BloomlabError(`BLOOMLAB=${named} is not an executable file`);
    return named;
  }
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const file = path.join(dir || '.', 'bloomlab');
    if (executable(file)) return file;
  }
  throw new BloomlabError('no bloomlab command on PATH: `pip install bloomlab` installs it (in a venv, put its bin/ on PATH), or set BLOOMLAB to its path');
}

function number(flag, value, ok, allowed) {
  if (typeof value !== 'number' || !ok(value)) throw new RangeError(`${flag} = ${value} is invalid: it must be ${allowed}`);
  return [`--${flag}`, String(value)];
}

function checkSupports(supports) {
  const keys = supports && typeof supports === 'object' ? Object.keys(supports) : [];
  if (keys.length === 0 || keys.some((k) => k !== 'n' && k !== 'p')) {
    throw new RangeError(`supports = ${JSON.stringify(supports)} is invalid: it must be an object with the keys n and/or p, each an inclusive [low, high] range`);
  }
  for (const k of keys) {
    const r = supports[k];
    const ok = Array.isArray(r) && r.length === 2 && r.every((v) => typeof v === 'number' && Number.isFinite(v)) &&
      (k === 'n' ? r.every(Number.isInteger) && 1 <= r[0] && r[0] <= r[1] : 0 < r[0] && r[0] <= r[1] && r[1] < 1);
    if (!ok) throw new RangeError(`supports.${k} = ${JSON.stringify(r)} is invalid: it must be ${k === 'n' ? 'whole numbers with 1 <= low <= high' : 'rates with 0 < low <= high < 1'}`);
  }
  return supports;
}

/** What the adapter says in HELLO: the options, else the export's own fields, else defaults. */
function about(exported, options) {
  const proto = typeof exported === 'function' ? exported.prototype : exported;
  const own = (field) => (exported[field] !== undefined ? exported[field] : proto && proto[field]);
  const missing = ['create', 'insert', 'query'].filter((m) => typeof (proto && proto[m]) !== 'function');
  if (missing.length > 0) throw new TypeError(`${exported.name || 'the export'} lacks ${missing.join(', ')}: a filter needs create(n, p), insert(keys) and query(keys)`);
  let caps = own('capabilities');
  if (caps === undefined) {
    caps = [];
    if (typeof proto.serialize === 'function' && typeof proto.deserialize === 'function') caps.push('serialize');
    if (typeof proto.stats === 'function') caps.push('stats');
  } else {
    caps = [...caps];
  }
  for (const cap of ['growable', 'static']) {
    let wanted = options[cap];
    if (wanted === undefined) wanted = Boolean(own(cap)) || caps.includes(cap);
    if (wanted && !caps.includes(cap)) caps.push(cap);
    if (!wanted) caps = caps.filter((c) => c !== cap);
  }
  const supports = options.supports !== undefined ? options.supports : own('supports');
  const name = typeof exported === 'function' ? exported.name : 'filter';
  return {
    name: options.name || (typeof own('name') === 'string' && typeof exported !== 'function' ? own('name') : null) || `node/${name}`,
    version: String(options.version || own('version') || 'unversioned'),
    language: 'node',
    capabilities: caps,
    supports: supports == null ? null : checkSupports(supports),
  };
}

/**
 * Checks the filter exported by the module at `modulePath` (a class with create/insert/query,
 * constructed once per filter the suite builds, or an object with those methods) and resolves to
 * a Result. Options: plan ('quick' or 'full'), export (the export's name; default the module's
 * default export or module.exports), name, version, growable, static, supports
 * ({n: [lo, hi], p: [lo, hi]}), n, p, seed, clauses, hunt (false: the promised point only),
 * deadline and timeout (seconds), out (a report directory), bloomlab (the command), node (the
 * runtime the filter runs in; default this one). Rejects with BloomlabError when there is no
 * verdict (bloomlab missing or refusing, the adapter not starting, an interrupt).
 */
async function check(modulePath, options = {}) {
  const plan = options.plan || 'quick';
  if (!PLANS.includes(plan)) throw new RangeError(`plan = ${plan} is invalid: it must be one of ${PLANS.join(', ')}`);
  if (typeof modulePath !== 'string') throw new TypeError('check() takes the path of the module that exports the filter');
  const module = path.resolve(modulePath);
  const exported = await loadExport(module, options.export);
  const spec = { module, export: options.export == null ? null : options.export, about: about(exported, options) };
  const flags = plan === 'quick' ? ['--quick'] : [];
  if (options.n !== undefined) flags.push(...number('n', options.n, (v) => Number.isInteger(v) && v >= 1 && v <= 2 ** 40, 'in 1..=2^40'));
  if (options.p !== undefined) flags.push(...number('p', options.p, (v) => v > 0 && v < 1, 'in (0, 1)'));
  if (options.seed !== undefined) flags.push(...number('seed', options.seed, (v) => Number.isSafeInteger(v) && v >= 0, 'a whole number from 0 to 2^53'));
  for (const flag of ['deadline', 'timeout']) {
    if (options[flag] !== undefined) flags.push(...number(flag, options[flag], (v) => v > 0 && v <= 86400, 'seconds in (0, 86400]'));
  }
  for (const clause of options.clauses || []) {
    if (!CLAUSES.includes(clause)) throw new RangeError(`clause ${clause} is unknown: the clauses are ${CLAUSES.join(', ')}`);
    flags.push('--clause', clause);
  }
  if (options.hunt === false) flags.push('--no-hunt');
  if (options.out !== undefined) flags.push('--out', String(options.out));
  const program = options.bloomlab || findBloomlab();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bloomlab-check-'));
  try {
    const verdicts = path.join(tmp, 'conformance.json');
    const command = [program, 'conform', ...flags, '--json', verdicts, '--adapter', '--',
      options.node || process.execPath, path.join(__dirname, 'adapter.js'), JSON.stringify(spec)];
    const { status, stdout, stderr } = await run(command);
    const tail = stderr.split('\n').filter(Boolean).slice(-TAIL).join('\n');
    if (status !== CONFORMS && status !== BROKEN) {
      const what = status === BAD_INPUT ? 'refused the check (bad input, or the adapter could not start)'
        : status === INTERRUPTED ? 'was interrupted' : `failed with exit status ${status}`;
      throw new BloomlabError(`bloomlab conform ${what}:\n${tail}`);
    }
    let raw;
    try {
      raw = JSON.parse(fs.readFileSync(verdicts, 'utf8'));
    } catch (e) {
      throw new BloomlabError(`bloomlab conform wrote no readable verdicts (${e.message}):\n${tail}`);
    }
    const result = new Result(raw.map(conformance), stdout, status, command);
    if (result.conforms !== (status === CONFORMS)) {
      throw new BloomlabError(`bloomlab conform exited ${status} but its verdicts say ${result.conforms ? 'no clause' : 'a clause'} broken:\n${tail}`);
    }
    return result;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function conformance(c) {
  return {
    subject: c.subject.name,
    version: c.subject.version,
    n: c.n,
    p: c.p,
    seed: c.seed,
    verdicts: c.verdicts.map((v) => ({ clause: v.clause, outcome: v.outcome, figure: v.figure, evidence: v.evidence, reproduce: v.reproduce })),
    raw: c,
  };
}

function run(command) {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [], err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', (e) => reject(new BloomlabError(`cannot run ${command[0]}: ${e.message}`)));
    child.on('close', (code, signal) => resolve({
      status: code === null ? `signal ${signal}` : code,
      stdout: Buffer.concat(out).toString('utf8'),
      stderr: Buffer.concat(err).toString('utf8'),
    }));
  });
}

module.exports = { check, findBloomlab, BloomlabError, Result, PLANS, CLAUSES };
