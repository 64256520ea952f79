import { afterEach, describe, expect, it, vi } from 'vitest';

/** EMAIL alerts without nodemailer installed (an optional peer): each attempt says what to install. */

afterEach(() => {
  vi.doUnmock('nodemailer');
  vi.resetModules();
});

describe('EMAIL alerts without nodemailer', () => {
  it('fail with a DependencyUnavailableError naming the package and the npm line to run', async () => {
    vi.resetModules();
    vi.doMock('nodemailer', () => {
      throw new Error("Cannot find package 'nodemailer' imported from /app/node_modules/nestjs-elastic-job");
    });
    const { sendEmail } = await import('../../lib/job/alerts/email-alerts.js');
    const props = {
      'email.host': 'smtp.example.com',
      'email.port': '465',
      'email.username': 'jobs',
      'email.password': 'pw',
      'email.from': 'jobs@example.com',
      'email.to': 'ops@example.com',
    };
    const message = { jobName: 'ledger', text: "Job 'ledger' exception occur in job processing, caused by Error: x" };
    for (let attempt = 0; attempt < 2; attempt++)
      await expect(sendEmail(message, props)).rejects.toMatchObject({
        name: 'DependencyUnavailableError',
        dependency: 'nodemailer',
        message: expect.stringMatching(
          /^the EMAIL error handler needs the nodemailer package: npm install nodemailer \(/,
        ),
      });
  });
});
