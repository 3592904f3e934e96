// The exact set, declared growable with a supported range (both reach bloomlab's HELLO).
'use strict';

const ExactSet = require('./exact-set');

class GrowingSet extends ExactSet {
  static growable = true;
  static supports = { n: [1, 1e8], p: [1e-6, 0.5] };
}

module.exports = { GrowingSet };
