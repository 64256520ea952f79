import { COMMANDS } from './commands/index.js';

export const PROGRAM = 'nestjs-elastic-job';

/** The help text: every command from its own definition, then the flags and exit codes. */
export function usage(): string {
  const width = Math.max(...COMMANDS.map((command) => `${command.name} ${command.synopsis}`.length));
  const commands = COMMANDS.map(
    (command) => `  ${`${command.name} ${command.synopsis}`.padEnd(width)}  ${command.summary}`,
  );
  return [
    `Usage: ${PROGRAM} <command> --zk host:port[,host:port...] --namespace NS [options]`,
    '',
    "Operates the jobs of a namespace through ZooKeeper, as ElasticJob's lifecycle API does, running or not.",
    '',
    'Commands:',
    ...commands,
    '',
    'Options:',
    '  --zk host:port[,...]   ZooKeeper servers (default: $ZK_CONNECT); a /chroot may follow',
    '  --namespace NS         the namespace of the jobs (required)',
    '  --digest user:pass     digest authentication, for a namespace written with a digest',
    '  --timeout MS           how long to wait for ZooKeeper to answer (default 15000)',
    '  --json                 one JSON document on stdout: exactly what the operator API returns',
    '  --ip IP                a server, for jobs, disable, enable, shutdown and remove',
    '  --param P              the job parameter of the triggered run, for trigger',
    '  --set key=value        a configuration field to change (repeatable), for config',
    '  --watch                redraw on every change until Ctrl-C, for jobs and sharding (--json: a line each)',
    '  -h, --help             this text',
    '',
    'Exit codes: 0 done, 1 the operation failed (the reason on stderr), 2 bad usage or a bad argument,',
    '            3 no such job or server.',
    '',
    `Development: ${PROGRAM} zookeeper [--port N] runs a throwaway local ZooKeeper until Ctrl-C;`,
    `             ${PROGRAM} cron '<expression>' [--zone Z] [--count N] shows its next fire times.`,
    '',
  ].join('\n');
}
