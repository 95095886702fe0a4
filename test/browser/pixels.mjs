// What a screenshot shows, read from its pixels: a small PNG decoder (8-bit RGB/RGBA, no
// interlace: what Chromium writes) and the checks the page tests make on it. The tests judge the
// page as a user sees it at load, not only its DOM.
import assert from 'node:assert/strict';
import zlib from 'node:zlib';

export function decodePng(buffer) {
  assert.equal(buffer.toString('latin1', 1, 4), 'PNG', 'not a PNG');
  let pos = 8, width = 0, height = 0, colourType = 0;
  const idat = [];
  while (pos < buffer.length) {
    const length = buffer.readUInt32BE(pos), type = buffer.toString('latin1', pos + 4, pos + 8);
    const data = buffer.subarray(pos + 8, pos + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      assert.equal(data[8], 8, 'bit depth'); colourType = data[9];
      assert.ok(colourType === 2 || colourType === 6, `colour type ${colourType}`);
      assert.equal(data[12], 0, 'interlaced');
    } else if (type === 'IDAT') idat.push(data);
    pos += 12 + length;
  }
  const channels = colourType === 6 ? 4 : 3, stride = width * channels;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const out = Buffer.alloc(width * height * 3);
  let prev = Buffer.alloc(stride), line = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)], src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels] : 0, b = prev[i], c = i >= channels ? prev[i - channels] : 0;
      let v = src[i];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      line[i] = v & 255;
    }
    for (let x = 0; x < width; x++)
      for (let k = 0; k < 3; k++) out[(y * width + x) * 3 + k] = line[x * channels + k];
    [prev, line] = [line, prev];
  }
  return { width, height, pixel: (x, y) => Array.from(out.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)) };
}

// Pixels of drawn frames in a rectangle of the screenshot: coloured ones (not the page's
// near-white background, grey text or black outlines), as a share of the rectangle.
export function colouredShare(img, box) {
  let coloured = 0, all = 0;
  for (let y = Math.max(0, Math.floor(box.y)); y < Math.min(img.height, box.y + box.h); y++) {
    for (let x = Math.max(0, Math.floor(box.x)); x < Math.min(img.width, box.x + box.w); x++) {
      const [r, g, b] = img.pixel(x, y);
      all++;
      if (Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;
    }
  }
  return all ? coloured / all : 0;
}

// Screen rows (top to bottom) where at least `share` of the row's pixels in [x0, x1) match
// `test(rgb)`: e.g. the rows of a frame as wide as the graph.
export function rowsWhere(img, x0, x1, test, share = 0.9) {
  const rows = [];
  for (let y = 0; y < img.height; y++) {
    let n = 0;
    for (let x = x0; x < x1; x++) if (test(img.pixel(x, y))) n++;
    if (n >= share * (x1 - x0)) rows.push(y);
  }
  return rows;
}
