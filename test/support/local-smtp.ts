import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A mail as the server received it: the envelope, the parsed headers and body, and whether the session was TLS. */
export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  subject: string | undefined;
  from: string | undefined;
  to: string[];
  cc: string[];
  bcc: string[];
  text: string;
  html: string;
  /** TLS from the first byte (SMTPS) or upgraded by STARTTLS. */
  secure: boolean;
  user: string | undefined;
}

export interface LocalSmtp {
  port: number;
  mails: ReceivedMail[];
  /** Sessions the server saw, refused ones included. */
  connections: number;
  /** While true, every connection is answered 421 (the server going down); set false, it takes mail again. */
  refusing: boolean;
  close(): Promise<void>;
}

/**
 * A real SMTP server (nodemailer's smtp-server) on a free loopback port: SMTPS when `secure`, otherwise plain with
 * STARTTLS offered (smtp-server's own self-signed certificate either way); AUTH with `user`/`pass` only; `refuse`
 * answers every connection with 421, as a server going down does.
 */
export async function startSmtp(options: {
  secure: boolean;
  user: string;
  pass: string;
  refuse?: boolean;
}): Promise<LocalSmtp> {
  const mails: ReceivedMail[] = [];
  const state = { connections: 0, refusing: options.refuse === true };
  const server = new SMTPServer({
    secure: options.secure,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onConnect(_session, callback) {
      state.connections++;
      if (state.refusing) {
        const error = new Error('Service not available, closing transmission channel') as Error & {
          responseCode?: number;
        };
        error.responseCode = 421;
        return callback(error);
      }
      callback();
    },
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.pass)
        return callback(null, { user: auth.username });
      callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      simpleParser(stream, (error: Error | null, mail) => {
        if (error) return callback(error);
        const addresses = (field: typeof mail.to): string[] =>
          (Array.isArray(field) ? field : field ? [field] : []).flatMap((list) => list.value.map((a) => a.address!));
        mails.push({
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          },
          subject: mail.subject,
          from: mail.from?.value[0]?.address,
          to: addresses(mail.to),
          cc: addresses(mail.cc),
          bcc: addresses(mail.bcc),
          text: mail.text ?? '',
          html: typeof mail.html === 'string' ? mail.html : '',
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    get connections() {
      return state.connections;
    },
    get refusing() {
      return state.refusing;
    },
    set refusing(value: boolean) {
      state.refusing = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
