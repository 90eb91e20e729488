'use strict';
// The reference server's eyes: reads a PNG's bytes (its own decoder on Node's zlib), finds
// the one coloured shape on a light background and the dark digits under it, and says what
// it sees ("purple diamond", 42) from the pixels alone: the hue of the shape's pixels, the
// outline's fill ratio and row widths, and each digit's 5x7 dot pattern.
const zlib = require('zlib');

const PNG_SIG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// {width, height, px (RGB bytes, rows top to bottom)} of an 8-bit RGB, RGBA, grey or
// grey+alpha, non-interlaced PNG; throws on anything else.
function decodePng(buf) {
	if (buf.length < 8 || !buf.subarray(0, 8).equals(PNG_SIG)) throw new Error('not a PNG');
	let at = 8;
	let ihdr = null;
	const idat = [];
	while (at + 8 <= buf.length) {
		const len = buf.readUInt32BE(at);
		const type = buf.toString('latin1', at + 4, at + 8);
		const data = buf.subarray(at + 8, at + 8 + len);
		if (type === 'IHDR') ihdr = data;
		else if (type === 'IDAT') idat.push(data);
		else if (type === 'IEND') break;
		at += 12 + len;
	}
	if (!ihdr) throw new Error('PNG without IHDR');
	const width = ihdr.readUInt32BE(0);
	const height = ihdr.readUInt32BE(4);
	const depth = ihdr[8];
	const ctype = ihdr[9];
	const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[ctype];
	if (depth !== 8 || !channels || ihdr[12] !== 0) throw new Error('unsupported PNG format');
	const raw = zlib.inflateSync(Buffer.concat(idat));
	const stride = width * channels;
	const cur = Buffer.alloc(stride);
	const prev = Buffer.alloc(stride);
	const px = Buffer.alloc(width * height * 3);
	for (let y = 0; y < height; y++) {
		const f = raw[y * (stride + 1)];
		const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
		for (let i = 0; i < stride; i++) {
			const a = i >= channels ? cur[i - channels] : 0;
			const b = prev[i];
			const c = i >= channels ? prev[i - channels] : 0;
			let v = line[i];
			if (f === 1) v += a;
			else if (f === 2) v += b;
			else if (f === 3) v += (a + b) >> 1;
			else if (f === 4) {
				const p = a + b - c;
				const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
				v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
			}
			cur[i] = v & 255;
		}
		for (let x = 0; x < width; x++) {
			const s = x * channels;
			const grey = channels < 3;
			px[(y * width + x) * 3] = cur[s];
			px[(y * width + x) * 3 + 1] = grey ? cur[s] : cur[s + 1];
			px[(y * width + x) * 3 + 2] = grey ? cur[s] : cur[s + 2];
		}
		cur.copy(prev);
	}
	return { width, height, px };
}

function hsv(r, g, b) {
	const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
	let h = 0;
	if (d > 0) {
		if (max === r) h = ((g - b) / d + 6) % 6;
		else if (max === g) h = (b - r) / d + 2;
		else h = (r - g) / d + 4;
	}
	return { h: h * 60, s: max ? d / max : 0, v: max / 255 };
}

const HUES = [['red', 0], ['orange', 30], ['yellow', 55], ['green', 130], ['blue', 220], ['purple', 285], ['red', 360]];

function colourName(r, g, b) {
	const { h } = hsv(r, g, b);
	let best = null, bd = Infinity;
	for (const [name, at] of HUES) if (Math.abs(h - at) < bd) { best = name; bd = Math.abs(h - at); }
	return best;
}

// Pixel classes: 1 = the shape (saturated), 2 = ink (dark, unsaturated), 0 = background.
function classify(img) {
	const { width, height, px } = img;
	const cls = new Uint8Array(width * height);
	for (let i = 0; i < width * height; i++) {
		const c = hsv(px[i * 3], px[i * 3 + 1], px[i * 3 + 2]);
		if (c.s > 0.35 && c.v > 0.25) cls[i] = 1;
		else if (c.v < 0.35) cls[i] = 2;
	}
	return cls;
}

function bbox(cls, width, height, want, y0, y1) {
	let x0 = width, x1 = -1, t = height, b = -1, n = 0;
	for (let y = y0; y < y1; y++) {
		for (let x = 0; x < width; x++) {
			if (cls[y * width + x] !== want) continue;
			n++;
			if (x < x0) x0 = x;
			if (x > x1) x1 = x;
			if (y < t) t = y;
			if (y > b) b = y;
		}
	}
	return n ? { x0, x1, y0: t, y1: b, n } : null;
}

function rowWidth(cls, width, y, want) {
	let a = -1, z = -1;
	for (let x = 0; x < width; x++) if (cls[y * width + x] === want) { if (a < 0) a = x; z = x; }
	return a < 0 ? 0 : z - a + 1;
}

// Number of separate runs of shape pixels on row y (a star's points give two).
function rowRuns(cls, width, y) {
	let runs = 0, inside = false;
	for (let x = 0; x < width; x++) {
		const on = cls[y * width + x] === 1;
		if (on && !inside) runs++;
		inside = on;
	}
	return runs;
}

function shapeFeatures(cls, width, box) {
	const w = box.x1 - box.x0 + 1, h = box.y1 - box.y0 + 1;
	const at = (f) => rowWidth(cls, width, box.y0 + Math.min(h - 1, Math.floor(f * h)), 1) / w;
	let maxRuns = 0;
	for (let y = box.y0; y <= box.y1; y++) maxRuns = Math.max(maxRuns, rowRuns(cls, width, y));
	return { fill: box.n / (w * h), aspect: w / h, top: at(0.08), mid: at(0.5), bottom: at(0.92), maxRuns };
}

function shapeName(f) {
	if (f.maxRuns >= 2) return 'star';
	if (f.fill > 0.93) return 'square';
	if (f.fill < 0.62) return Math.abs(f.top - f.bottom) > 0.4 ? 'triangle' : 'diamond';
	return f.aspect > 1.08 ? 'hexagon' : 'circle';
}

// 5x7 digit patterns, rows top to bottom, '#' a dot.
const DIGITS = {
	0: ['.###.', '#...#', '#..##', '#.#.#', '##..#', '#...#', '.###.'],
	1: ['..#..', '.##..', '..#..', '..#..', '..#..', '..#..', '.###.'],
	2: ['.###.', '#...#', '....#', '...#.', '..#..', '.#...', '#####'],
	3: ['#####', '...#.', '..#..', '...#.', '....#', '#...#', '.###.'],
	4: ['...#.', '..##.', '.#.#.', '#..#.', '#####', '...#.', '...#.'],
	5: ['#####', '#....', '####.', '....#', '....#', '#...#', '.###.'],
	6: ['..##.', '.#...', '#....', '####.', '#...#', '#...#', '.###.'],
	7: ['#####', '....#', '...#.', '..#..', '.#...', '.#...', '.#...'],
	8: ['.###.', '#...#', '#...#', '.###.', '#...#', '#...#', '.###.'],
	9: ['.###.', '#...#', '#...#', '.####', '....#', '...#.', '.##..'],
};

// The digits written in ink under the shape, or null: glyphs are split at empty
// columns, each sampled on a 5x7 grid and matched to the nearest pattern.
function readDigits(cls, width, height, below) {
	const box = bbox(cls, width, height, 2, below, height);
	if (!box) return null;
	const h = box.y1 - box.y0 + 1;
	const cols = [];
	for (let x = box.x0; x <= box.x1; x++) {
		let on = false;
		for (let y = box.y0; y <= box.y1 && !on; y++) on = cls[y * width + x] === 2;
		cols.push(on);
	}
	const glyphs = [];
	for (let i = 0; i < cols.length;) {
		if (!cols[i]) { i++; continue; }
		let j = i;
		while (j < cols.length && cols[j]) j++;
		glyphs.push([box.x0 + i, box.x0 + j - 1]);
		i = j;
	}
	const dot = h / 7;
	let text = '';
	for (const [g0, g1] of glyphs) {
		// a glyph narrower than 5 dots ("1") is centred in its 5-dot cell
		const dots = Math.max(1, Math.round((g1 - g0 + 1) / dot));
		const left = g0 - Math.floor((5 - Math.min(5, dots)) / 2) * dot;
		let best = null, bd = Infinity;
		for (const [d, rows] of Object.entries(DIGITS)) {
			let diff = 0;
			for (let r = 0; r < 7; r++) {
				for (let c = 0; c < 5; c++) {
					const x = Math.floor(left + (c + 0.5) * dot), y = Math.floor(box.y0 + (r + 0.5) * dot);
					const on = x >= 0 && x < width && cls[y * width + x] === 2;
					diff += on !== (rows[r][c] === '#');
				}
			}
			if (diff < bd) { best = d; bd = diff; }
		}
		text += best;
	}
	return text ? Number(text) : null;
}

// What one PNG shows: {colour, shape, number (null when none)}.
function look(buf) {
	const img = decodePng(buf);
	const cls = classify(img);
	const box = bbox(cls, img.width, img.height, 1, 0, img.height);
	if (!box) return null;
	let r = 0, g = 0, b = 0;
	for (let i = 0; i < img.width * img.height; i++) {
		if (cls[i] !== 1) continue;
		r += img.px[i * 3]; g += img.px[i * 3 + 1]; b += img.px[i * 3 + 2];
	}
	const f = shapeFeatures(cls, img.width, box);
	return {
		colour: colourName(r / box.n, g / box.n, b / box.n),
		shape: shapeName(f),
		number: readDigits(cls, img.width, img.height, box.y1 + 1),
		features: f,
	};
}

// The PNG bytes of a data: URL, or null.
function pngOfDataUrl(url) {
	const m = /^data:image\/png;base64,(.*)$/s.exec(url || '');
	return m ? Buffer.from(m[1], 'base64') : null;
}

module.exports = { decodePng, look, pngOfDataUrl };
