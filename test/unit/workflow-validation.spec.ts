import { describe, expect, it } from 'vitest';
import { JobConfigurationError } from '../../lib/errors/elastic-job.errors.js';
import { stepOrder, validateWorkflowOptions, validateWorkflowSteps } from '../../lib/workflow/workflow-validation.js';

const diamond = { a: [], b: ['a'], c: ['a'], d: ['b', 'c'] };

describe('validateWorkflowOptions', () => {
  it('takes chains, fan-out and fan-in, with or without a cron', () => {
    const [nightly, manual] = validateWorkflowOptions([
      { name: 'nightly', cron: '0 0 2 * * *', steps: diamond, keepRuns: 5 },
      { name: 'manual', steps: { extract: [], load: ['extract'] } },
    ]);
    expect(nightly!.steps).toEqual(diamond);
    expect(manual!.cron).toBeUndefined();
    expect(validateWorkflowOptions(undefined)).toEqual([]);
  });

  it('puts parents before their children', () => {
    const order = stepOrder({ d: ['b', 'c'], c: ['a'], b: ['a'], a: [] });
    expect(order.indexOf('a')).toBe(0);
    expect(order.indexOf('d')).toBe(3);
  });

  it.each([
    [
      'a cycle',
      [{ name: 'w', steps: { a: ['c'], b: ['a'], c: ['b'] } }],
      /workflows\[w\]\.steps'.*cycle: a -> c -> b -> a/,
    ],
    ['a step waiting for itself', [{ name: 'w', steps: { a: ['a'] } }], /steps\.a'.*waits for itself/],
    ['an unknown parent', [{ name: 'w', steps: { a: [], b: ['x'] } }], /steps\.b'.*waits for 'x', which is not a step/],
    ['a parent listed twice', [{ name: 'w', steps: { a: [], b: ['a', 'a'] } }], /steps\.b'.*lists 'a' twice/],
    [
      'a step in two workflows',
      [
        { name: 'one', steps: { a: [] } },
        { name: 'two', steps: { a: [] } },
      ],
      /workflows\[two\]\.steps\.a'.*already a step of workflow 'one'/,
    ],
    [
      'two workflows of one name',
      [
        { name: 'w', steps: { a: [] } },
        { name: 'w', steps: { b: [] } },
      ],
      /workflows\[w\]\.name'.*names two workflows/,
    ],
    [
      'a name with a slash',
      [{ name: 'a/b', steps: { a: [] } }],
      /workflows\[0\]\.name'.*ZooKeeper node name.*contains '\/'/,
    ],
    ['a name that is ..', [{ name: '..', steps: { a: [] } }], /workflows\[0\]\.name'.*relative path segment/],
    ['a step that is not a node name', [{ name: 'w', steps: { 'x y': [] } }], /workflows\[w\]\.steps'.*whitespace/],
    ['no steps', [{ name: 'w', steps: {} }], /steps'.*has no step/],
    ['parents not a list', [{ name: 'w', steps: { a: 'b' } }], /steps\.a'.*must list the steps/],
    ['a bad cron', [{ name: 'w', cron: 'every night', steps: { a: [] } }], /workflows\[w\]\.cron'/],
    ['a bad time zone', [{ name: 'w', cron: '0 0 2 * * *', timeZone: 'Mars/Base', steps: { a: [] } }], /timeZone'/],
    ['keepRuns 0', [{ name: 'w', keepRuns: 0, steps: { a: [] } }], /keepRuns'.*1\.\.1000/],
    ['an unknown option', [{ name: 'w', step: {}, steps: { a: [] } }], /workflows\[w\]\.step'.*not a workflow option/],
    ['not an array', { name: 'w' }, /'workflows'.*must be an array/],
  ])('refuses %s, naming it', (_what, workflows, message) => {
    expect(() => validateWorkflowOptions(workflows)).toThrow(JobConfigurationError);
    expect(() => validateWorkflowOptions(workflows)).toThrow(message);
  });
});

describe('validateWorkflowSteps', () => {
  const jobs = new Map([
    ['a', { oneOff: true }],
    ['b', { oneOff: true }],
    ['cron-job', { oneOff: false }],
  ]);

  it('takes steps that are one-off jobs of the app', () => {
    expect(() =>
      validateWorkflowSteps(validateWorkflowOptions([{ name: 'w', steps: { a: [], b: ['a'] } }]), jobs),
    ).not.toThrow();
  });

  it('refuses a step that is no job of the app, and a job with a cron', () => {
    expect(() => validateWorkflowSteps([{ name: 'w', steps: { a: [], x: ['a'] } }], jobs)).toThrow(
      /workflows\[w\]\.steps\.x'.*'x' is not a job of this app/,
    );
    expect(() => validateWorkflowSteps([{ name: 'w', steps: { 'cron-job': [] } }], jobs)).toThrow(
      /job 'cron-job' has a cron.*oneOff: true/,
    );
  });
});
