// SPDX-License-Identifier: MIT
//
// check_speedscope.js - validate a `vmp speedscope` output against the JSON
// schema that the speedscope package ships (dist/release/file-format-schema.json)
// with Ajv, then check what the schema cannot say (indexes in range, one
// weight per sample, weights adding up to endValue - startValue) and print a
// summary (JSON) for run_speedscope_tests.py.
//
//   node check_speedscope.js NPM_DIR FILE.json
'use strict';
const fs = require('fs');
const path = require('path');

const [npmDir, file] = process.argv.slice(2);
const modules = path.join(npmDir, 'node_modules');
const Ajv = require(path.join(modules, 'ajv'));
const schema = JSON.parse(
    fs.readFileSync(path.join(modules, 'speedscope', 'dist', 'release', 'file-format-schema.json'),
                    'utf8'));
const ajv = new Ajv({allErrors: true, strict: false});
const validate = ajv.compile(schema);
const data = JSON.parse(fs.readFileSync(file, 'utf8'));
if (!validate(data)) {
    console.error('schema: ' + JSON.stringify(validate.errors.slice(0, 3)));
    process.exit(1);
}
const frames = data.shared.frames;
const problems = [];
const summary = {profiles: [], frames: frames.length};
for (const p of data.profiles) {
    if (p.type !== 'sampled') {
        problems.push(p.name + ': type ' + p.type);
        continue;
    }
    if (p.samples.length !== p.weights.length)
        problems.push(p.name + ': ' + p.samples.length + ' samples, ' + p.weights.length + ' weights');
    let total = 0;
    const leaf = {};
    p.samples.forEach((s, i) => {
        for (const f of s)
            if (!Number.isInteger(f) || f < 0 || f >= frames.length)
                problems.push(p.name + ': frame index ' + f + ' out of range');
        total += p.weights[i];
        if (s.length) {
            const name = frames[s[s.length - 1]].name;
            leaf[name] = (leaf[name] || 0) + p.weights[i];
        }
    });
    if (total !== p.endValue - p.startValue)
        problems.push(p.name + ': weights add up to ' + total + ', not endValue - startValue');
    summary.profiles.push({name: p.name, unit: p.unit, total: total, samples: p.samples.length,
                           leaf: leaf});
}
if (problems.length) {
    console.error(problems.slice(0, 5).join('\n'));
    process.exit(1);
}
console.log(JSON.stringify(summary));
