// Keys assigned per second by the JavaScript client in Node (benchmarks/bench_edge.py runs it):
// node clients/js/bench.mjs [keys]
import { Assigner } from "./banditkit-assign.mjs";

const n = Number(process.argv[2] ?? 2000000);
const assigner = new Assigner({ version: "v", salt: "826e399a0c5c90ad",
  arms: ["control", "b", "c", "d"], weights: [0.25, 0.25, 0.25, 0.25] });
const keys = Array.from({ length: n }, (_, i) => `user-${i}`);
for (let i = 0; i < 100000; i++) assigner.assign(keys[i]); // warm up the JIT
const start = process.hrtime.bigint();
const cpu = process.cpuUsage();
let count = 0;
for (let i = 0; i < n; i++) if (assigner.assign(keys[i]) === "control") count++;
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const used = process.cpuUsage(cpu);
const cpuSeconds = (used.user + used.system) / 1e6;
console.log(JSON.stringify({ keys: n, seconds, per_second: n / seconds,
  per_cpu_second: n / cpuSeconds, control: count / n }));
