// An exact set of keys: no false positive, no false negative (the filter that conforms).
'use strict';

class ExactSet {
  static version = '1.0';

  create(n, p) {
    if (!(n >= 1)) throw new RangeError(`n = ${n} is invalid: it must be at least 1`);
    if (!(p > 0 && p < 1)) throw new RangeError(`p = ${p} is invalid: it must be in (0, 1)`);
    this.keys = new Set();
  }

  insert(keys) {
    for (const k of keys) this.keys.add(k.toString('latin1'));
  }

  query(keys) {
    return keys.map((k) => this.keys.has(k.toString('latin1')));
  }
}

module.exports = ExactSet;
