#!/usr/bin/env node
import { Logger } from '@nestjs/common';
import { runCli } from './run.js';

// The library logs through Nest's Logger (connection warnings, among others); the CLI says what matters itself,
// on its own streams.
Logger.overrideLogger(false);

const code = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
// The output is written and the session closed by now: nothing left over (a client still trying to connect) may
// keep the shell waiting.
process.exit(code);
