// Conformance adapter for the npm package `bloom-filters` (its BloomFilter; version pinned in
// node/package-lock.json). Start it with `scripts/conform/adapter bloom-filters`.
//
// Speaks protocol version 1 of crates/conform/src/process/mod.rs on stdin/stdout, synchronously
// (one request at a time, so blocking reads are the simplest correct loop).
//
// What the library does, reported as is:
// - BloomFilter.create(n, p) sizes m = ceil(-n ln p / ln(2)^2) bits and k = ceil(m / n ln 2),
//   one flat array (declared `classic`).
// - Keys: its HashableInput is string | ArrayBuffer | Buffer, and xxhashjs hashes a Buffer's raw
//   bytes (a string is UTF-8 encoded first; a plain Uint8Array is rejected). Each key is passed
//   as a Buffer view of the request's bytes, so every byte string, empty and 64 KiB included, is
//   hashed faithfully: no string conversion is needed.
// - Persistence: saveAsJSON / BloomFilter.fromJSON; SERIALIZE answers that JSON as UTF-8.
// Exceptions from the library are answered ERROR with `Name: message`; a protocol violation by
// bloomlab (a bad frame or key list) ends the adapter with a message on stderr and exit status
// 3. As the spec decides, an unknown opcode is answered UNSUPPORTED and a HELLO with other magic
// bytes or version ERROR.
'use strict';

const fs = require('fs');
const { BloomFilter } = require('bloom-filters');
const VERSION_OF = require('bloom-filters/package.json').version;

const PROTOCOL = 1;
const MAGIC = Buffer.from('bloomlab-conform', 'ascii');
const MAX_FRAME = 2 ** 30;
const OP = { HELLO: 1, CREATE: 2, INSERT: 3, QUERY: 4, STATS: 5, SERIALIZE: 6, DESERIALIZE: 7, CLOSE: 8 };
const NAMES = Object.fromEntries(Object.entries(OP).map(([k, v]) => [v, k]));
const OK = 0, ERROR = 1, UNSUPPORTED = 2;

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

// The keys of a key list as Buffer views of `payload` (no copy).
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

let filter = null;

// The answer to one request other than HELLO and CLOSE, as [status, body].
function answer(op, payload) {
  switch (op) {
    case OP.CREATE: {
      if (payload.length !== 16) throw new Violation(`CREATE payload of ${payload.length} bytes, not 16`);
      // n as a JS number: exact up to 2^53, far beyond any n a filter can hold in memory.
      const n = Number(payload.readBigUInt64LE(0));
      const p = payload.readDoubleLE(8);
      filter = null;
      filter = BloomFilter.create(n, p);
      return [OK, Buffer.alloc(0)];
    }
    case OP.DESERIALIZE:
      filter = null;
      filter = BloomFilter.fromJSON(JSON.parse(payload.toString('utf8')));
      return [OK, Buffer.alloc(0)];
    case OP.INSERT:
    case OP.QUERY:
    case OP.STATS:
    case OP.SERIALIZE:
      break;
    default:
      // A later protocol version's request: answered UNSUPPORTED, as the spec decides.
      return [UNSUPPORTED, Buffer.from(`opcode ${op}`)];
  }
  if (filter === null) return [ERROR, Buffer.from(`${NAMES[op]} before any CREATE or DESERIALIZE`)];
  if (op === OP.INSERT) {
    for (const key of keyList(payload)) filter.add(key);
    return [OK, Buffer.alloc(0)];
  }
  if (op === OP.QUERY) {
    const keys = keyList(payload);
    const bits = Buffer.alloc((keys.length + 7) >> 3);
    for (let i = 0; i < keys.length; i++) if (filter.has(keys[i])) bits[i >> 3] |= 1 << (i & 7);
    return [OK, bits];
  }
  if (op === OP.STATS) {
    const stats = {
      // The library's BitSet: one bit per position, in a Uint8Array.
      memory_bytes: filter._filter.array.byteLength,
      layout: { layout: 'classic', bits: filter.size, hashes: filter._nbHashes },
    };
    return [OK, Buffer.from(JSON.stringify(stats))];
  }
  return [OK, Buffer.from(JSON.stringify(filter.saveAsJSON()))];
}

// HELLO's answer; other magic bytes or another version are answered ERROR (the spec's decision:
// bloomlab then reports a refusal and stops the adapter).
function hello(payload) {
  if (payload.length !== 18 || !payload.subarray(0, 16).equals(MAGIC) || payload.readUInt16LE(16) !== PROTOCOL) {
    return [ERROR, Buffer.from(`this adapter speaks bloomlab-conform protocol ${PROTOCOL}`)];
  }
  return [OK, Buffer.from(JSON.stringify({
    protocol: PROTOCOL,
    name: 'node/bloom-filters',
    version: VERSION_OF,
    language: 'node',
    capabilities: ['serialize', 'stats'],
  }))];
}

function main() {
  for (;;) {
    const head = readExact(4, true);
    if (head === null) return 0;
    const size = head.readUInt32LE(0);
    if (size < 1 || size > MAX_FRAME) throw new Violation(`frame length ${size} outside 1..=2^30`);
    const frame = readExact(size, false);
    const op = frame[0];
    const payload = frame.subarray(1);
    if (op === OP.HELLO) {
      send(...hello(payload));
    } else if (op === OP.CLOSE) {
      send(OK, Buffer.alloc(0));
      return 0;
    } else {
      let status, body;
      try {
        [status, body] = answer(op, payload);
      } catch (e) {
        if (e instanceof Violation) throw e;
        const name = e instanceof Error ? e.name : typeof e;
        const message = e instanceof Error ? e.message : String(e);
        [status, body] = [ERROR, Buffer.from(`${name}: ${message}`)];
      }
      send(status, body);
    }
  }
}

try {
  process.exitCode = main();
} catch (e) {
  if (e instanceof Violation) {
    process.stderr.write(`node/bloom-filters adapter: protocol violation by bloomlab: ${e.message}\n`);
    process.exitCode = 3;
  } else if (e && e.code === 'EPIPE') {
    process.exitCode = 0;
  } else {
    throw e;
  }
}
