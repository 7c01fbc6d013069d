#!/usr/bin/env node
// Entry point of the `fieldgate` command: runs the compiled CLI (built by `npm ci` via prepare).
import { main } from '../dist/cli.js';

process.exitCode = await main(process.argv.slice(2));
