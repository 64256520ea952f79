import { DependencyUnavailableError } from '../../errors/elastic-job.errors.js';
import type { AlertMessage } from './alert-message.js';
import { ALERT_DEFAULTS, boolProp, intProp, splitAddresses } from './alert-props.js';

/** What this file uses of nodemailer (kept here so that no public declaration names nodemailer's types). */
interface Mailer {
  createTransport(options: Record<string, unknown>): {
    sendMail(mail: Record<string, unknown>): Promise<{ accepted?: unknown[]; rejected?: unknown[] }>;
    close(): void;
  };
}

let nodemailer: Promise<Mailer> | undefined;

/**
 * nodemailer, loaded the first time a job's EMAIL handler sends: an optional peer dependency, so that an app
 * without email alerts neither installs nor loads it (the core stays as light as it was; package.json's
 * peerDependenciesMeta). Missing, each failed send says what to install (logged once per outage).
 */
function loadNodemailer(): Promise<Mailer> {
  return (nodemailer ??= import('nodemailer').then(
    (module) => ((module as { default?: Mailer }).default ?? module) as Mailer,
    (error: unknown) => {
      nodemailer = undefined; // installed later (a deploy): tried again at the next alert
      const why = String((error as Error)?.message ?? error).split('\n')[0];
      throw new DependencyUnavailableError(
        'nodemailer',
        `the EMAIL error handler needs the nodemailer package: npm install nodemailer (${why})`,
      );
    },
  ));
}

/** Bounds of one SMTP conversation (JavaMail has none by default; an alert must not hang on a dead server). */
const CONNECT_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/**
 * One mail, as ElasticJob's EmailJobErrorHandler.java sends it: `email.subject` (default "ElasticJob error
 * message"), from `email.from`, to `email.to` (split on commas), `email.cc`, `email.bcc`, the text as the body
 * (ElasticJob sends it as text/html: here an HTML body with the text preformatted, and the plain text beside it).
 * `email.useSsl` true (the default): TLS from the first byte (SMTPS, usually port 465), as JavaMail's SSL socket
 * factory; false: a plain connection upgraded by STARTTLS when the server offers it (usually port 587 or 25).
 * `email.ssl.trust` as JavaMail's `mail.smtp.ssl.trust`: `*` trusts any certificate, a list of hosts (separated by
 * spaces) trusts theirs, otherwise the certificate is verified.
 */
export async function sendEmail(
  message: AlertMessage,
  props: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<void> {
  const mailer = await loadNodemailer();
  const host = props['email.host']!.trim();
  const port = intProp(props, 'email.port', 0);
  const trust = (props['email.ssl.trust'] ?? '').trim().split(/\s+/).filter(Boolean);
  const transport = mailer.createTransport({
    host,
    port,
    secure: boolProp(props, 'email.useSsl', ALERT_DEFAULTS.emailUseSsl),
    auth: { user: props['email.username'], pass: props['email.password'] },
    tls: trust.includes('*') || trust.includes(host) ? { rejectUnauthorized: false } : {},
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    // email.debug is accepted (ElasticJob's JavaMail transcript) and not followed: nodemailer's transcript would
    // print the AUTH exchange, the password with it.
    logger: false,
  });
  // Given up (the job stopped here): closing the transport ends the conversation, and sendMail rejects.
  const giveUp = (): void => transport.close();
  signal?.addEventListener('abort', giveUp, { once: true });
  try {
    await transport.sendMail({
      from: props['email.from']!.trim(),
      to: splitAddresses(props['email.to']),
      cc: splitAddresses(props['email.cc']),
      bcc: splitAddresses(props['email.bcc']),
      subject: props['email.subject'] ?? ALERT_DEFAULTS.emailSubject,
      text: message.text,
      html: `<pre>${escapeHtml(message.text)}</pre>`,
      date: new Date(),
    });
  } catch (error) {
    // nodemailer's messages name the command and the server's answer (`Invalid login: 535 ...`), never the password.
    const code = (error as { code?: unknown; responseCode?: unknown })?.code;
    const text = error instanceof Error ? error.message.split('\n')[0]!.slice(0, 300) : String(error);
    throw new DependencyUnavailableError(
      `${host}:${port}`,
      `SMTP ${host}:${port}: ${typeof code === 'string' ? `${code} ` : ''}${text}`,
    );
  } finally {
    signal?.removeEventListener('abort', giveUp);
    transport.close();
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
