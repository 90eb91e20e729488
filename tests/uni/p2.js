const t = require('tokenizers');
const cps = s => [...s].map(c=>c.codePointAt(0).toString(16)).join(' ');
console.log(cps(t.nfcNormalizer().normalizeString('\u{11935}\u{11930}')), cps(t.nfcNormalizer().normalizeString('e\u0301')));
console.log(cps(t.nfkcNormalizer().normalizeString('\u{1CCF0}')));
