/** Prints the host-HA transition table, or with --write puts it into docs/ARCHITECTURE.md (clc/ha/haTableDoc.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderHaTable, withHaTable } from '../clc/ha/haTableDoc.js';

const DOC = 'docs/ARCHITECTURE.md';
if (process.argv.includes('--write')) writeFileSync(DOC, withHaTable(readFileSync(DOC, 'utf8')));
else process.stdout.write(`${renderHaTable()}\n`);
