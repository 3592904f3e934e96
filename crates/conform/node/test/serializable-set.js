// The exact set with the optional methods (its keys survive a round trip), and one whose
// serialize() loses its longest keys: members missed only after a round trip.
'use strict';

const { keyList, encodeKeyList } = require('bloomlab-conform');
const ExactSet = require('./exact-set');

class SerializableSet extends ExactSet {
  serialize() {
    return encodeKeyList([...this.keys].map((k) => Buffer.from(k, 'latin1')));
  }

  deserialize(data) {
    this.keys = new Set(keyList(data).map((k) => k.toString('latin1')));
  }

  stats() {
    return { memory_bytes: [...this.keys].reduce((sum, k) => sum + k.length, 0), layout: null };
  }
}

class ForgetfulSerializer extends SerializableSet {
  serialize() {
    return encodeKeyList([...this.keys].filter((k) => k.length < 1000).map((k) => Buffer.from(k, 'latin1')));
  }
}

module.exports = { SerializableSet, ForgetfulSerializer };
