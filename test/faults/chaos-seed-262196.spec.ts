import { chaosSuite } from './chaos-run.js';

/** One seed of the chaos run (test/faults/chaos-run.ts), a file of its own so that the seeds run in parallel. */
chaosSuite(262196);
