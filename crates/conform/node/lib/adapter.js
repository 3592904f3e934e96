// The adapter process check() starts: `node lib/adapter.js SPEC`. SPEC is the JSON check() wrote
// (the filter module's absolute path, the export to use, what to say in HELLO). It loads the
// module (CommonJS or ES), builds the filter from the export (a class is constructed, an object
// used as is) and serves the protocol with it until bloomlab closes it. A module or export it
// cannot load is a message on stderr and exit status 2, which bloomlab reports as an adapter
// that could not start.
'use strict';

const { serve } = require('./protocol');
const { loadExport } = require('./load');

async function main() {
  const spec = JSON.parse(process.argv[2]);
  let adapter;
  try {
    const exported = await loadExport(spec.module, spec.export);
    const inner = typeof exported === 'function' ? new exported() : exported;
    adapter = Object.assign(Object.create(inner), spec.about);
  } catch (e) {
    process.stderr.write(`bloomlab-conform adapter: ${e && e.stack ? e.stack : e}\n`);
    process.exitCode = 2;
    return;
  }
  serve(adapter);
}

main();
