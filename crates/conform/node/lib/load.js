'use strict';

const { pathToFileURL } = require('url');

/**
 * The export `name` of the module at `path` (CommonJS or ES); without a name, the module's
 * default export (for CommonJS, `module.exports`).
 */
async function loadExport(path, name) {
  const ns = await import(pathToFileURL(path).href);
  if (name == null) {
    if (ns.default === undefined) throw new Error(`${path} has no default export: name the export (options.export)`);
    return ns.default;
  }
  const found = name in ns ? ns[name] : ns.default && ns.default[name];
  if (found === undefined) throw new Error(`${path} exports no ${name}`);
  return found;
}

module.exports = { loadExport };
