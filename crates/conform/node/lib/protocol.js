// The bloomlab conformance protocol, version 1, for Node adapters (no dependencies). The
// specification is the doc of crates/conform/src/process/mod.rs in bloomlab's repository.
//
// An adapter is an object with `name`, `version`, `language`, `capabilities` (any of 'serialize',
// 'stats', 'static', 'growable'), optionally `supports` ({n: [lo, hi], p: [lo, hi]}, inclusive),
// and the methods create(n, p), insert(keys), query(keys) -> array of truthy ("maybe present"),
// and optionally stats() -> {memory_bytes, layout}, serialize() -> Buffer, deserialize(buffer).
// Keys are Buffers (views of the request: copy one to keep it past the call). serve(adapter)
// answers bloomlab's requests on stdin/stdout, synchronously, until CLOSE; a method the adapter
// lacks is answered UNSUPPORTED, an exception ERROR with `Name: message` (the library refused).
'use strict';

const fs = require('fs');

const PROTOCOL = 1;
const MAGIC = Buffer.from('bloomlab-conform', 'ascii');
const MAX_FRAME = 2 ** 30;
const OP = { HELLO: 1, CREATE: 2, INSERT: 3, QUERY: 4, STATS: 5, SERIALIZE: 6, DESERIALIZE: 7, CLOSE: 8 };
const NAMES = Object.fromEntries(Object.entries(OP).map(([k, v]) => [v, k]));
// The adapter's method for each request other than HELLO and CLOSE.
const METHODS = { [OP.CREATE]: 'create', [OP.INSERT]: 'insert', [OP.QUERY]: 'query', [OP.STATS]: 'stats', [OP.SERIALIZE]: 'serialize', [OP.DESERIALIZE]: 'deserialize' };
const OK = 0, ERROR = 1, UNSUPPORTED = 2;
const EMPTY = Buffer.alloc(0);

/** bloomlab broke the protocol (a bad frame or key list): the adapter stops. */
class Violation extends Error {}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

// Reads exactly `size` bytes from stdin; null at end of input before the first byte when
// `atBoundary` (a clean end between frames).
function readExact(size, atBoundary) {
  const buf = Buffer.allocUnsafe(size);
  let got = 0;
  while (got < size) {
    let n;
    try {
      n = fs.readSync(0, buf, got, size - got, null);
    } catch (e) {
      if (e.code === 'EAGAIN') {
        // A non-blocking stdin (inherited, not a plain pipe): sleep 1 ms instead of spinning.
        Atomics.wait(PAUSE, 0, 0, 1);
        continue;
      }
      if (e.code === 'EOF') n = 0;
      else throw e;
    }
    if (n === 0) {
      if (atBoundary && got === 0) return null;
      throw new Violation(`input ended after ${got} of ${size} bytes`);
    }
    got += n;
  }
  return buf;
}

function writeAll(buf) {
  let at = 0;
  while (at < buf.length) {
    try {
      at += fs.writeSync(1, buf, at, buf.length - at);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(PAUSE, 0, 0, 1);
    }
  }
}

function send(status, body) {
  const head = Buffer.alloc(5);
  head.writeUInt32LE(body.length + 1, 0);
  head[4] = status;
  writeAll(Buffer.concat([head, body]));
}

/** The keys of a key list as Buffer views of `payload` (no copy). */
function keyList(payload) {
  if (payload.length < 4) throw new Violation('key list shorter than its count');
  const count = payload.readUInt32LE(0);
  const keys = new Array(count);
  let at = 4;
  for (let i = 0; i < count; i++) {
    if (at + 4 > payload.length) throw new Violation(`key list ends before its key ${i} of ${count}`);
    const size = payload.readUInt32LE(at);
    at += 4;
    if (at + size > payload.length) throw new Violation(`key ${i} of ${count} runs past the frame`);
    keys[i] = payload.subarray(at, at + size);
    at += size;
  }
  if (at !== payload.length) throw new Violation(`${payload.length - at} bytes after the key list`);
  return keys;
}

/** Encodes keys as a key list (what SERIALIZE of a set of keys can reuse). */
function encodeKeyList(keys) {
  const parts = [Buffer.alloc(4)];
  parts[0].writeUInt32LE(keys.length, 0);
  for (const k of keys) {
    const size = Buffer.alloc(4);
    size.writeUInt32LE(k.length, 0);
    parts.push(size, k);
  }
  return Buffer.concat(parts);
}

/** HELLO's JSON answer for `adapter`. */
function helloAnswer(adapter) {
  const answer = {
    protocol: PROTOCOL,
    name: adapter.name,
    version: String(adapter.version),
    language: adapter.language || 'node',
    capabilities: [...(adapter.capabilities || [])],
  };
  if (adapter.supports != null) answer.supports = adapter.supports;
  return Buffer.from(JSON.stringify(answer));
}

// The answer to one request other than HELLO and CLOSE, as [status, body].
function answer(adapter, state, op, payload) {
  const method = METHODS[op];
  if (method === undefined) return [UNSUPPORTED, Buffer.from(`opcode ${op}`)];
  if (typeof adapter[method] !== 'function') return [UNSUPPORTED, Buffer.from(method)];
  if (op === OP.CREATE) {
    if (payload.length !== 16) throw new Violation(`CREATE payload of ${payload.length} bytes, not 16`);
    // n as a JS number: exact up to 2^53, far beyond any n a filter can hold in memory.
    const n = Number(payload.readBigUInt64LE(0));
    const p = payload.readDoubleLE(8);
    state.filter = false; // a CREATE that throws leaves no filter
    adapter.create(n, p);
    state.filter = true;
    return [OK, EMPTY];
  }
  if (op === OP.DESERIALIZE) {
    state.filter = false;
    adapter.deserialize(payload);
    state.filter = true;
    return [OK, EMPTY];
  }
  if (!state.filter) return [ERROR, Buffer.from(`${NAMES[op]} before any CREATE or DESERIALIZE`)];
  if (op === OP.INSERT) {
    adapter.insert(keyList(payload));
    return [OK, EMPTY];
  }
  if (op === OP.QUERY) {
    const keys = keyList(payload);
    const answers = adapter.query(keys);
    if (answers.length !== keys.length) {
      throw new Error(`query answered ${answers.length} times for ${keys.length} keys`);
    }
    const bits = Buffer.alloc((keys.length + 7) >> 3);
    for (let i = 0; i < keys.length; i++) if (answers[i]) bits[i >> 3] |= 1 << (i & 7);
    return [OK, bits];
  }
  if (op === OP.STATS) return [OK, Buffer.from(JSON.stringify(adapter.stats()))];
  return [OK, Buffer.from(adapter.serialize())];
}

function loop(adapter) {
  const state = { filter: false };
  for (;;) {
    const head = readExact(4, true);
    if (head === null) return;
    const size = head.readUInt32LE(0);
    if (size < 1 || size > MAX_FRAME) throw new Violation(`frame length ${size} outside 1..=2^30`);
    const frame = readExact(size, false);
    const op = frame[0];
    const payload = frame.subarray(1);
    if (op === OP.CLOSE) {
      send(OK, EMPTY);
      return;
    }
    if (op === OP.HELLO) {
      // Other magic bytes or another version are answered ERROR (bloomlab reports a refusal).
      const ok = payload.length === 18 && payload.subarray(0, 16).equals(MAGIC) && payload.readUInt16LE(16) === PROTOCOL;
      if (ok) send(OK, helloAnswer(adapter));
      else send(ERROR, Buffer.from(`this adapter speaks bloomlab-conform protocol ${PROTOCOL}`));
      continue;
    }
    let status, body;
    try {
      [status, body] = answer(adapter, state, op, payload);
    } catch (e) {
      if (e instanceof Violation) throw e;
      const name = e instanceof Error ? e.name : typeof e;
      const message = e instanceof Error ? e.message : String(e);
      [status, body] = [ERROR, Buffer.from(`${name}: ${message}`)];
    }
    send(status, body);
  }
}

/**
 * Serves `adapter` on stdin/stdout until CLOSE or the end of input, then sets the exit status:
 * 0, or 3 if bloomlab broke the protocol (the message on stderr). A library's console output
 * goes to stderr: stdout carries only frames.
 */
function serve(adapter) {
  const toStderr = (...args) => process.stderr.write(require('util').format(...args) + '\n');
  console.log = console.info = console.debug = toStderr;
  process.stdout.write = process.stderr.write.bind(process.stderr);
  try {
    loop(adapter);
    process.exitCode = 0;
  } catch (e) {
    if (e instanceof Violation) {
      process.stderr.write(`${adapter.name} adapter: protocol violation by bloomlab: ${e.message}\n`);
      process.exitCode = 3;
    } else if (e && e.code === 'EPIPE') {
      process.exitCode = 0;
    } else {
      throw e;
    }
  }
}

module.exports = { serve, keyList, encodeKeyList, PROTOCOL, OP };
