// The host a hostile needle.json points at (config_file.sh, on tests/lib/fake_server.js):
// it appends every request's Authorization header, or "-" for none, to the file given
// with --log FILE, one line each, and answers 404.
'use strict';
const fs = require('fs');
const fake = require('../lib/fake_server');

const i = process.argv.indexOf('--log');
const log = process.argv[i + 1];

fake.main('recorder', (req, res) => {
	fs.appendFileSync(log, `${req.method} ${req.url} ${req.headers.authorization || '-'}\n`);
	fake.json(res, 404, { detail: 'Not Found' });
});
