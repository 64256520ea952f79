/**
 * A loopback TCP proxy for fault tests: put it between a client and ZooKeeper, then
 * - cut(): destroy every piped connection and refuse new ones (a clean disconnect),
 * - freeze(): keep the sockets open but stop forwarding (a silent partition),
 * - deafen(): forward the server's bytes, drop the client's (requests sent meanwhile are never answered),
 * - restore(): accept and forward again.
 * Loopback only, by construction.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

type Mode = 'forwarding' | 'cut' | 'frozen' | 'deaf';

export class TcpProxy {
  private server: Server | undefined;
  private readonly pairs = new Set<[Socket, Socket]>();
  private mode: Mode = 'forwarding';
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<void> {
    this.mode = 'forwarding';
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(port, '127.0.0.1', () => resolve());
    });
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : port;
  }

  private accept(client: Socket): void {
    if (this.mode === 'cut') {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('data', (chunk) => {
      if (this.mode === 'forwarding') upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (this.mode === 'forwarding' || this.mode === 'deaf') client.write(chunk);
    });
    client.on('close', close);
    upstream.on('close', close);
    client.on('error', close);
    upstream.on('error', close);
  }

  /** Clean disconnect: both sides see the connection close; new connections are refused until restore(). */
  cut(): void {
    this.mode = 'cut';
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
  }

  /** Silent partition: sockets stay open, bytes are dropped in both directions. */
  freeze(): void {
    this.mode = 'frozen';
  }

  /** One way: the client still hears the server (its watch notifications), the server no longer hears the client. */
  deafen(): void {
    this.mode = 'deaf';
  }

  restore(): void {
    if (this.mode === 'frozen' || this.mode === 'deaf') {
      // Bytes were dropped mid-stream: the framing is broken, so start those connections over.
      for (const [a, b] of this.pairs) {
        a.destroy();
        b.destroy();
      }
      this.pairs.clear();
    }
    this.mode = 'forwarding';
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
