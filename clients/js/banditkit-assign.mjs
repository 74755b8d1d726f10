// banditkit's assigner for browsers and Node: the same arm as the Python client
// (banditkit.client) for the same allocation and key. Dependency-free ES module.
//
// The hash (documented in banditkit.client, checked on shared test vectors):
//   1. digest = SHA-256(UTF-8(salt + ":" + key)), the key as text;
//   2. u = parseInt(first 13 hex digits of digest, 16) / 16**13: 52 bits, exact in a double,
//      uniform in [0, 1);
//   3. running sums c_i = w_0 + ... + w_i (left to right, in doubles); the arm is the first i
//      with w_i > 0 and u * c_{K-1} < c_i, else the last arm with w_i > 0.
//
// SHA-256 is computed here in plain JavaScript (synchronous, so assign() returns an arm, not
// a Promise, in a browser too: WebCrypto's digest is asynchronous only). It is FIPS 180-4's
// algorithm, checked against node:crypto in clients/js/test.mjs.

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const W = new Int32Array(64);
const encoder = new TextEncoder();
let buffer = new Uint8Array(256);

// The compression of one 64-byte block held in W[0..15] into the state H (FIPS 180-4, 6.2.2).
function compress(H) {
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15], y = W[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
  }
  H[0] = (H[0] + a) | 0; H[1] = (H[1] + b) | 0; H[2] = (H[2] + c) | 0; H[3] = (H[3] + d) | 0;
  H[4] = (H[4] + e) | 0; H[5] = (H[5] + f) | 0; H[6] = (H[6] + g) | 0; H[7] = (H[7] + h) | 0;
}

const INIT = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
  0x1f83d9ab, 0x5be0cd19];
const STATE = new Int32Array(8);

// The first two 32-bit words of SHA-256(bytes[0:length]) (all the hash needs: 52 bits), into
// HEAD (no array allocated per key).
function sha256Head(bytes, length) {
  STATE.set(INIT);
  const padded = (((length + 8) >> 6) + 1) * 64;
  if (buffer.length < padded) buffer = new Uint8Array(padded * 2);
  if (bytes !== buffer) buffer.set(bytes.subarray(0, length));
  buffer.fill(0, length, padded);
  buffer[length] = 0x80;
  const bits = length * 8;
  buffer[padded - 4] = bits >>> 24; buffer[padded - 3] = bits >>> 16;
  buffer[padded - 2] = bits >>> 8; buffer[padded - 1] = bits;
  buffer[padded - 5] = Math.floor(bits / 0x100000000);
  for (let b = 0; b < padded; b += 64) {
    for (let i = 0; i < 16; i++) {
      const j = b + i * 4;
      W[i] = (buffer[j] << 24) | (buffer[j + 1] << 16) | (buffer[j + 2] << 8) | buffer[j + 3];
    }
    compress(STATE);
  }
  HEAD[0] = STATE[0] >>> 0;
  HEAD[1] = STATE[1] >>> 0;
}

// The same for an ASCII text of at most 55 characters (one block), read straight into W:
// ids and UUIDs with a 16-digit salt take this path. Returns false for any other text.
function asciiHead(text) {
  const n = text.length;
  if (n > 55) return false;
  W.fill(0, 0, 16);
  for (let j = 0; j < n; j++) {
    const c = text.charCodeAt(j);
    if (c > 0x7f) return false;
    W[j >> 2] |= c << (24 - 8 * (j & 3));
  }
  W[n >> 2] |= 0x80 << (24 - 8 * (n & 3));
  W[15] = n * 8;
  STATE.set(INIT);
  compress(STATE);
  HEAD[0] = STATE[0] >>> 0;
  HEAD[1] = STATE[1] >>> 0;
  return true;
}
const HEAD = new Float64Array(2);

function encode(text) {
  // ASCII fast path (ids, UUIDs); anything else through TextEncoder (UTF-8)
  const n = text.length;
  if (buffer.length < n * 3 + 72) buffer = new Uint8Array(n * 3 + 72);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return encoder.encodeInto(text, buffer).written;
    buffer[i] = c;
  }
  return n;
}

/** The full SHA-256 hex digest of a text (UTF-8): the same compression as the assigner's,
 *  all eight words read (clients/js/test.mjs checks it against node:crypto). */
export function sha256Hex(text) {
  const bytes = encoder.encode(text);
  const length = bytes.length;
  const padded = (((length + 8) >> 6) + 1) * 64;
  const data = new Uint8Array(padded);
  data.set(bytes);
  data[length] = 0x80;
  const bits = length * 8;
  data[padded - 4] = bits >>> 24; data[padded - 3] = bits >>> 16;
  data[padded - 2] = bits >>> 8; data[padded - 1] = bits;
  data[padded - 5] = Math.floor(bits / 0x100000000);
  const state = Int32Array.from(INIT);
  for (let b = 0; b < padded; b += 64) {
    for (let i = 0; i < 16; i++) {
      const j = b + i * 4;
      W[i] = (data[j] << 24) | (data[j + 1] << 16) | (data[j + 2] << 8) | data[j + 3];
    }
    compress(state);
  }
  return Array.from(state, (w) => (w >>> 0).toString(16).padStart(8, "0")).join("");
}

const SCALE = 2 ** 52;

/** The key's uniform number in [0, 1) (the first 52 bits of SHA-256(salt ":" key)). */
export function uniform(salt, key) {
  const text = salt + ":" + key;
  if (!asciiHead(text)) {
    const length = encode(text); // may replace the buffer: read it after
    sha256Head(buffer, length);
  }
  // 52 bits: all 32 of the first word and the top 20 of the second (13 hex digits)
  return (HEAD[0] * 1048576 + Math.floor(HEAD[1] / 4096)) / SCALE;
}

function checkAllocation(allocation) {
  if (allocation === null || typeof allocation !== "object") {
    throw new TypeError("allocation must be the allocation document (an object)");
  }
  for (const field of ["version", "salt", "arms", "weights"]) {
    if (!(field in allocation)) throw new TypeError(`allocation lacks ${field}`);
  }
  const { arms, weights } = allocation;
  if (!Array.isArray(arms) || arms.length === 0 || !arms.every((a) => typeof a === "string")) {
    throw new TypeError("allocation: arms must be a non-empty list of names");
  }
  if (!Array.isArray(weights) || weights.length !== arms.length
      || !weights.every((w) => typeof w === "number" && Number.isFinite(w) && w >= 0)
      || !weights.some((w) => w > 0)) {
    throw new TypeError("allocation: weights must be one finite number >= 0 per arm, at least "
      + "one positive");
  }
}

/** Assigns keys to arms by an allocation; sticky through an optional store
 *  ({get(key), set(key, arm)}, e.g. a Map, localStorage wrapped, a cookie). */
export class Assigner {
  constructor(allocation, store = null) {
    this.store = store;
    this.update(allocation);
  }

  /** Use another allocation from now on (checked first; a bad one is refused). */
  update(allocation) {
    checkAllocation(allocation);
    const cumulative = [];
    let running = 0;
    for (const w of allocation.weights) {
      running += w;
      cumulative.push(running);
    }
    this.allocation = allocation;
    this.version = allocation.version;
    this.salt = allocation.salt;
    this.arms = allocation.arms.slice();
    this.total = running;
    this.cumulative = cumulative.map((c, i) => (allocation.weights[i] > 0 ? c : -1));
    this.offered = new Set(this.arms.filter((_, i) => allocation.weights[i] > 0));
    let last = 0;
    allocation.weights.forEach((w, i) => { if (w > 0) last = i; });
    this.last = last;
  }

  /** The arm of one key. */
  assign(key) {
    if (!((typeof key === "string" && key !== "") || Number.isInteger(key))) {
      throw new TypeError(`key must be a non-empty text or an integer, got ${key}`);
    }
    const store = this.store;
    if (store) {
      const kept = store.get(String(key));
      if (kept != null && this.offered.has(kept)) return kept;
    }
    const x = uniform(this.salt, key) * this.total;
    let arm = this.arms[this.last];
    const c = this.cumulative;
    for (let i = 0; i < c.length; i++) {
      if (x < c[i]) { arm = this.arms[i]; break; }
    }
    if (store) store.set(String(key), arm);
    return arm;
  }

  /** The arms of several keys, in order. */
  assignMany(keys) {
    return Array.from(keys, (k) => this.assign(k));
  }

  /** The exposure event of key on arm (what POST .../events takes). */
  exposure(key, arm, time = Date.now() / 1000) {
    return { key: String(key), arm, version: this.version, time };
  }
}
