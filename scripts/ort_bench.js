// ort_bench.js - ONNX Runtime's float32 inference time of a model on one
// thread, the reference scripts/bench.sh (section "C model against ONNX
// Runtime") holds the C model's int8 inference against. ONNX Runtime comes
// from npm (onnxruntime-node, installed by bench.sh into build/ort).
//   node scripts/ort_bench.js ORT_DIR MODEL.onnx SHAPE N
// SHAPE is the input's, e.g. 1,3,224,224 (filled with 0.5: a dense float
// network's work does not depend on the values). One session with
// intraOpNumThreads 1, interOpNumThreads 1, sequential execution; the first
// run timed on its own, then N runs. Prints one JSON object: milliseconds of
// the session's creation, the first run, the median and the minimum of the
// N runs, and the median of their process CPU time.
'use strict';
const path = require('path');
const [ortDir, model, shapeArg, nArg] = process.argv.slice(2);
if (!ortDir || !model || !shapeArg || !nArg) {
	console.error('usage: node ort_bench.js ORT_DIR MODEL.onnx SHAPE N');
	process.exit(2);
}
const ort = require(path.resolve(ortDir, 'node_modules', 'onnxruntime-node'));
const ms = (a) => Number(process.hrtime.bigint() - a) / 1e6;
const median = (v) => {
	const s = [...v].sort((a, b) => a - b);
	return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};
(async () => {
	const shape = shapeArg.split(',').map(Number);
	const n = Number(nArg);
	let t = process.hrtime.bigint();
	const s = await ort.InferenceSession.create(model, {
		intraOpNumThreads: 1,
		interOpNumThreads: 1,
		executionMode: 'sequential',
	});
	const create = ms(t);
	const x = new ort.Tensor('float32', new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(0.5), shape);
	const feeds = { [s.inputNames[0]]: x };
	t = process.hrtime.bigint();
	await s.run(feeds);
	const first = ms(t);
	const wall = [], cpu = [];
	for (let i = 0; i < n; i++) {
		const c = process.cpuUsage();
		t = process.hrtime.bigint();
		await s.run(feeds);
		wall.push(ms(t));
		const d = process.cpuUsage(c);
		cpu.push((d.user + d.system) / 1000);
	}
	console.log(JSON.stringify({
		version: require(path.resolve(ortDir, 'node_modules', 'onnxruntime-node', 'package.json')).version,
		create_ms: create, first_ms: first, steady_median_ms: median(wall), steady_min_ms: Math.min(...wall),
		steady_cpu_median_ms: median(cpu), runs: n,
	}));
})().catch((e) => {
	console.error(String(e));
	process.exit(1);
});
