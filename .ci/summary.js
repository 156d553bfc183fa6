// Prints jest's totals from its --json output as one plain line: "N passed, N failed[, N skipped]".
const fs = require('node:fs');

const results = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const skipped = results.numPendingTests + results.numTodoTests;
const failed = results.numFailedTests + (results.numRuntimeErrorTestSuites || 0);
let line = `${results.numPassedTests} passed, ${failed} failed`;
if (skipped > 0) line += `, ${skipped} skipped`;
console.log(line);
