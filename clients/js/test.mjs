// Checks the JavaScript client against the shared test vectors (clients/js/vectors.json, made
// by the Python client) and its SHA-256 against node:crypto. Exit status 1 on any difference.
// Run: node clients/js/test.mjs   (tests/test_client.py runs it in `make test`)
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { Assigner, uniform, sha256Hex } from "./banditkit-assign.mjs";

const here = new URL(".", import.meta.url);
const data = JSON.parse(readFileSync(new URL("vectors.json", here), "utf8"));
let failures = 0, checked = 0;
for (const { allocation, cases } of data.vectors) {
  const assigner = new Assigner(allocation);
  for (const { key, uniform: u, arm } of cases) {
    checked++;
    const gotU = uniform(allocation.salt, key), gotArm = assigner.assign(key);
    if (gotU !== u || gotArm !== arm) {
      failures++;
      if (failures < 10) {
        console.log(`differs: ${allocation.version} key ${JSON.stringify(key)}: ` +
          `uniform ${gotU} vs ${u}, arm ${gotArm} vs ${arm}`);
      }
    }
  }
}
for (const text of ["", "abc", "x".repeat(55), "x".repeat(56), "x".repeat(64), "x".repeat(119),
  "x".repeat(200), "é😀", "826e399a0c5c90ad:user-1"]) {
  checked++;
  if (sha256Hex(text) !== createHash("sha256").update(text).digest("hex")) {
    failures++;
    console.log(`sha256 differs on a text of ${text.length} characters`);
  }
}
// sticky: a Map as the store keeps a key's arm while the weights move
const store = new Map();
const sticky = new Assigner({ version: "1", salt: "s", arms: ["a", "b"], weights: [0.5, 0.5] },
  store);
const first = Array.from({ length: 200 }, (_, i) => sticky.assign(`k${i}`));
sticky.update({ version: "2", salt: "s", arms: ["a", "b"], weights: [0.1, 0.9] });
const again = Array.from({ length: 200 }, (_, i) => sticky.assign(`k${i}`));
checked++;
if (first.join() !== again.join()) { failures++; console.log("sticky keys moved"); }
// an arm no longer offered (weight 0): assigned afresh, and the store follows
sticky.update({ version: "3", salt: "s", arms: ["a", "b"], weights: [1, 0] });
const moved = Array.from({ length: 200 }, (_, i) => sticky.assign(`k${i}`));
checked++;
if (moved.some((arm) => arm !== "a") || [...store.values()].some((arm) => arm !== "a")) {
  failures++;
  console.log("a key kept an arm that is no longer offered");
}
console.log(JSON.stringify({ checked, failures }));
process.exit(failures ? 1 : 0);
