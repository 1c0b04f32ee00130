/** Prints the NC's migration transition tables, or with --write puts them into docs/ARCHITECTURE.md (nc/migrationTableDoc.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderNcMigrationTables, withNcMigrationTables } from '../nc/migrationTableDoc.js';

const DOC = 'docs/ARCHITECTURE.md';
if (process.argv.includes('--write')) writeFileSync(DOC, withNcMigrationTables(readFileSync(DOC, 'utf8')));
else process.stdout.write(`${renderNcMigrationTables()}\n`);
