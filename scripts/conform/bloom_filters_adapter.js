// Conformance adapter for the npm package `bloom-filters` (its BloomFilter; version pinned in
// node/package-lock.json). Start it with `scripts/conform/adapter bloom-filters`.
//
// Speaks protocol version 1 of crates/conform/src/process/mod.rs on stdin/stdout through the
// bloomlab-conform npm package's serve() (crates/conform/node), as an author's adapter would.
//
// What the library does, reported as is:
// - BloomFilter.create(n, p) sizes m = ceil(-n ln p / ln(2)^2) bits and k = ceil(m / n ln 2),
//   one flat array (declared `classic`).
// - Keys: its HashableInput is string | ArrayBuffer | Buffer, and xxhashjs hashes a Buffer's raw
//   bytes (a string is UTF-8 encoded first; a plain Uint8Array is rejected). Each key is passed
//   as a Buffer view of the request's bytes, so every byte string, empty and 64 KiB included, is
//   hashed faithfully: no string conversion is needed.
// - Persistence: saveAsJSON / BloomFilter.fromJSON; SERIALIZE answers that JSON as UTF-8.
// Exceptions from the library are answered ERROR with `Name: message` (serve() does that, and
// ends the adapter with exit status 3 on a protocol violation by bloomlab).
'use strict';

const path = require('path');
const { BloomFilter } = require('bloom-filters');
const VERSION_OF = require('bloom-filters/package.json').version;
const { serve } = require(path.join(__dirname, '..', '..', 'crates', 'conform', 'node'));

serve({
  name: 'node/bloom-filters',
  version: VERSION_OF,
  language: 'node',
  capabilities: ['serialize', 'stats'],
  filter: null,
  create(n, p) {
    this.filter = null;
    this.filter = BloomFilter.create(n, p);
  },
  insert(keys) {
    for (const key of keys) this.filter.add(key);
  },
  query(keys) {
    return keys.map((key) => this.filter.has(key));
  },
  stats() {
    return {
      // The library's BitSet: one bit per position, in a Uint8Array.
      memory_bytes: this.filter._filter.array.byteLength,
      layout: { layout: 'classic', bits: this.filter.size, hashes: this.filter._nbHashes },
    };
  },
  serialize() {
    return Buffer.from(JSON.stringify(this.filter.saveAsJSON()));
  },
  deserialize(data) {
    this.filter = null;
    this.filter = BloomFilter.fromJSON(JSON.parse(data.toString('utf8')));
  },
});
